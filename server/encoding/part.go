package encoding

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"sync"
)

// Part is a piece of a JSON answer sent again and again unchanged (the
// items of a list while its collection does not change). Its compressed
// form is made once, at the first answer that is compressed, and later
// compressed answers embed it between the pieces around it.
type Part struct {
	raw      []byte
	once     sync.Once
	deflated []byte
}

// NewPart keeps raw, which must not change afterwards.
func NewPart(raw []byte) *Part { return &Part{raw: raw} }

// Len is the part's length, uncompressed.
func (p *Part) Len() int { return len(p.raw) }

// Size is the memory the part holds.
func (p *Part) Size() int { return cap(p.raw) + cap(p.deflated) }

// deflate returns the part as a run of deflate blocks (none of them final)
// ending on a byte boundary, that refer to nothing before them: raw
// deflate data that may follow any other such run.
func (p *Part) deflate() []byte {
	p.once.Do(func() {
		var b bytes.Buffer
		zw, _ := flate.NewWriter(&b, gzipLevel)
		zw.Write(p.raw)
		zw.Flush() // ends the run on a byte boundary, without a final block
		p.deflated = bytes.Clone(b.Bytes())
	})
	return p.deflated
}

// WriteJSONAround sends head, then part, then tail, as WriteJSON sends
// them, without copying part, and when the answer is compressed, with the
// part compressed once for all the answers that send it: head and tail,
// small, go as stored (uncompressed) deflate blocks around it.
func WriteJSONAround(w http.ResponseWriter, r *http.Request, code int, head []byte, part *Part, tail []byte) {
	w.Header().Set("Content-Type", JSON)
	tail = append(tail[:len(tail):len(tail)], '\n')
	if !gzipped(w, r, len(head)+part.Len()+len(tail)-1) {
		w.WriteHeader(code)
		for _, b := range [][]byte{head, part.raw, tail} {
			if _, err := w.Write(b); err != nil {
				return // the client is gone
			}
		}
		return
	}
	deflated := part.deflate()
	w.WriteHeader(code)
	// The gzip header (RFC 1952): deflate, no flags, no time, the fastest
	// level, an unknown operating system.
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff}
	out = appendStoredBlocks(out, head, false)
	if _, err := w.Write(out); err != nil {
		return
	}
	if _, err := w.Write(deflated); err != nil {
		return
	}
	out = appendStoredBlocks(out[:0], tail, true)
	crc := crc32.ChecksumIEEE(head)
	crc = crc32.Update(crc, crc32.IEEETable, part.raw)
	crc = crc32.Update(crc, crc32.IEEETable, tail)
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(head)+part.Len()+len(tail)))
	w.Write(out)
}

// appendStoredBlocks appends b as stored deflate blocks (RFC 1951, 3.2.4),
// the last one final if final, starting on a byte boundary and ending on
// one.
func appendStoredBlocks(dst, b []byte, final bool) []byte {
	for {
		n := min(len(b), 0xffff)
		last := n == len(b)
		var header byte // BTYPE 00: stored; the rest of the byte is padding
		if last && final {
			header = 1 // BFINAL
		}
		dst = append(dst, header)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
		dst = binary.LittleEndian.AppendUint16(dst, ^uint16(n))
		dst = append(dst, b[:n]...)
		if b = b[n:]; last {
			return dst
		}
	}
}
