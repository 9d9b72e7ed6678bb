package encoding

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// Layout locates, in an object as MarshalObject writes it, what a server
// changes when it sends the bytes it stored without decoding them: where
// metadata.resourceVersion goes, where the type meta ends, and the labels.
type Layout struct {
	// kind and apiVersion are the spans of the values of the first two
	// fields (quotes included); metadata is where the third field, the
	// "metadata" key, starts.
	kind, apiVersion [2]int
	metadata         int
	// rv is where a resourceVersion member goes in metadata: before the
	// member starting there (then followed by a comma), or before the
	// closing brace (then preceded by one unless metadata is empty).
	rv                   int
	rvBeforeBrace, empty bool
	// labels is the span of metadata.labels' value, {0, 0} when absent.
	labels [2]int
}

// Kind and APIVersion are the values of the object's kind and apiVersion
// as encoded (quoted); Labels is metadata.labels' value, nil when absent.
func (l Layout) Kind(b []byte) []byte       { return b[l.kind[0]:l.kind[1]] }
func (l Layout) APIVersion(b []byte) []byte { return b[l.apiVersion[0]:l.apiVersion[1]] }
func (l Layout) Labels(b []byte) []byte {
	if l.labels[1] == 0 {
		return nil
	}
	return b[l.labels[0]:l.labels[1]]
}

// Canonical reports whether b is exactly what MarshalObject writes for the
// object b decodes to (with numbers kept as written), with kind, apiVersion
// and metadata present and no metadata.resourceVersion, and if so returns
// its layout. Such bytes can be sent as they are, spliced by Layout.Append,
// and read the same as the object decoded and encoded again: no whitespace,
// fields in MarshalObject's order (nested objects' fields sorted, no
// duplicates), strings escaped as encoding/json escapes them. Anything else
// (invalid JSON, a key that needs escaping, another writer's spacing) is
// not canonical: its reader decodes it.
func Canonical(b []byte) (Layout, bool) {
	var l Layout
	s := canonScanner{b: b}
	if !s.lit(`{"kind":`) {
		return l, false
	}
	l.kind[0] = s.i
	if !s.str() {
		return l, false
	}
	l.kind[1] = s.i
	if !s.lit(`,"apiVersion":`) {
		return l, false
	}
	l.apiVersion[0] = s.i
	if !s.str() {
		return l, false
	}
	l.apiVersion[1] = s.i
	l.metadata = s.i + 1
	if !s.lit(`,"metadata":{`) || !s.metadata(&l) {
		return l, false
	}
	// The other fields, by name.
	var prev []byte
	for {
		if s.i >= len(b) {
			return l, false
		}
		if b[s.i] == '}' {
			s.i++
			return l, s.i == len(b)
		}
		if b[s.i] != ',' {
			return l, false
		}
		s.i++
		key, ok := s.key()
		if !ok || prev != nil && bytes.Compare(key, prev) <= 0 || isTop(key) || !s.value(1) {
			return l, false
		}
		prev = key
	}
}

func isTop(key []byte) bool {
	for _, k := range topOrder {
		if string(key) == k {
			return true
		}
	}
	return false
}

// metadataRank is a metadata field's place in metadataOrder, or
// len(metadataOrder) for the fields written after those, by name.
func metadataRank(key []byte) int {
	for i, k := range metadataOrder {
		if string(key) == k {
			return i
		}
	}
	return len(metadataOrder)
}

var rvRank = metadataRank([]byte("resourceVersion"))

// metadata scans metadata's members, s just past its opening brace, and
// leaves s past its closing one.
func (s *canonScanner) metadata(l *Layout) bool {
	rank, rvSet := -1, false
	var prev []byte
	if s.i < len(s.b) && s.b[s.i] == '}' {
		l.rv, l.rvBeforeBrace, l.empty = s.i, true, true
		s.i++
		return true
	}
	for {
		start := s.i
		key, ok := s.key()
		if !ok {
			return false
		}
		r := metadataRank(key)
		switch {
		case r == rvRank:
			return false
		case r < rank, r == rank && r < len(metadataOrder), r == rank && bytes.Compare(key, prev) <= 0:
			return false
		}
		if r > rvRank && !rvSet {
			l.rv, rvSet = start, true
		}
		rank, prev = r, key
		vstart := s.i
		if string(key) == "managedFields" {
			if !s.managedFields() {
				return false
			}
		} else if !s.value(2) {
			return false
		}
		if string(key) == "labels" {
			l.labels = [2]int{vstart, s.i}
		}
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			if !rvSet {
				l.rv, l.rvBeforeBrace = s.i, true
			}
			s.i++
			return true
		default:
			return false
		}
	}
}

// managedFields scans metadata.managedFields as writeManagedFields writes
// it: a list whose objects have their fields in managedFieldsOrder (any
// others after them, by name).
func (s *canonScanner) managedFields() bool {
	if !s.lit("[") {
		return false
	}
	if s.lit("]") {
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '{' {
			if !s.value(3) {
				return false
			}
		} else if s.i++; !s.rankedObject(managedFieldsOrder, 4) {
			return false
		}
		switch {
		case s.lit(","):
		case s.lit("]"):
			return true
		default:
			return false
		}
	}
}

// rankedObject scans an object's members, s just past its opening brace,
// whose fields come in order first, then any others by name; it leaves s
// past the closing brace.
func (s *canonScanner) rankedObject(order []string, depth int) bool {
	if s.lit("}") {
		return true
	}
	rank := func(key []byte) int {
		for i, k := range order {
			if string(key) == k {
				return i
			}
		}
		return len(order)
	}
	last, prev := -1, []byte(nil)
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		r := rank(key)
		if r < last || r == last && (r < len(order) || bytes.Compare(key, prev) <= 0) {
			return false
		}
		last, prev = r, key
		if !s.value(depth) {
			return false
		}
		switch {
		case s.lit(","):
		case s.lit("}"):
			return true
		default:
			return false
		}
	}
}

// Len is the length of Append's output.
func (l Layout) Len(b []byte, resourceVersion int64, withTypeMeta bool) int {
	n := len(b) + len(`"resourceVersion":"",`) + decimalLen(resourceVersion)
	if l.empty {
		n--
	}
	if !withTypeMeta {
		n -= l.metadata - 1
	}
	return n
}

// Append appends b with metadata.resourceVersion set to resourceVersion, and
// without kind and apiVersion unless withTypeMeta: what MarshalObject writes
// for b's object so changed.
func (l Layout) Append(dst, b []byte, resourceVersion int64, withTypeMeta bool) []byte {
	if withTypeMeta {
		dst = append(dst, b[:l.rv]...)
	} else {
		dst = append(dst, '{')
		dst = append(dst, b[l.metadata:l.rv]...)
	}
	if l.rvBeforeBrace && !l.empty {
		dst = append(dst, ',')
	}
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, resourceVersion, 10)
	dst = append(dst, '"')
	if !l.rvBeforeBrace {
		dst = append(dst, ',')
	}
	return append(dst, b[l.rv:]...)
}

func decimalLen(n int64) int {
	var buf [20]byte
	return len(strconv.AppendInt(buf[:0], n, 10))
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// canonScanner checks bytes for the form encoding/json writes.
type canonScanner struct {
	b []byte
	i int
}

func (s *canonScanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

// key scans `"name":` and returns the name, unescaped (encoding/json sorts
// the names of a map's keys, not their encoding).
func (s *canonScanner) key() ([]byte, bool) {
	start := s.i + 1
	if !s.str() || s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false
	}
	raw := s.b[start : s.i-1]
	s.i++
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	return unescape(raw), true
}

// unescape decodes the contents of a string str has accepted.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			n, _ := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32)
			out = utf8.AppendRune(out, rune(n))
			i += 4
		default: // " and \
			out = append(out, raw[i])
		}
	}
	return out
}

func (s *canonScanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		s.i++
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		var prev []byte
		for {
			key, ok := s.key()
			if !ok || prev != nil && bytes.Compare(key, prev) <= 0 || !s.value(depth+1) || s.i >= len(s.b) {
				return false
			}
			prev = key
			s.i++
			switch s.b[s.i-1] {
			case ',':
			case '}':
				return true
			default:
				return false
			}
		}
	case c == '[':
		s.i++
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			if !s.value(depth+1) || s.i >= len(s.b) {
				return false
			}
			s.i++
			switch s.b[s.i-1] {
			case ',':
			case ']':
				return true
			default:
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number scans a JSON number: decoded as a json.Number, it is written again
// as it is.
func (s *canonScanner) number() bool {
	b := s.b
	if b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i >= len(b):
		return false
	case b[s.i] == '0':
		s.i++
	case '1' <= b[s.i] && b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *canonScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// str scans a string escaped as encoding/json escapes it: control
// characters, <, >, &, U+2028 and U+2029 escaped, in its forms, and
// nothing else; valid UTF-8.
func (s *canonScanner) str() bool {
	b, i := s.b, s.i
	if i >= len(b) || b[i] != '"' {
		return false
	}
	i++
	for {
		// Eight plain bytes at a time, then one.
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && strClass[b[i]] == classPlain {
			i++
		}
		if i >= len(b) {
			return false
		}
		switch strClass[b[i]] {
		case classQuote:
			s.i = i + 1
			return true
		case classBackslash:
			s.i = i
			if !s.escape() {
				return false
			}
			i = s.i
		case classMultibyte:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				return false
			}
			i += n
		default:
			return false
		}
	}
}

// plainWord reports whether the eight bytes of x are all plain: ASCII, not
// a control character, ", \\, <, > or &.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte below n borrows into its high bit in x - n (exact for "is
	// there one"); a byte equal to v is a zero byte of x^v, below 1.
	q, bs, lt, gt, amp := x^(ones*'"'), x^(ones*'\\'), x^(ones*'<'), x^(ones*'>'), x^(ones*'&')
	found := x | (x-ones*0x20)&^x |
		(q-ones)&^q | (bs-ones)&^bs | (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
	return found&highs == 0
}

// The classes of a string's bytes.
const (
	classPlain = iota
	classQuote
	classBackslash
	classMultibyte
	classEscaped // written escaped by encoding/json
)

var strClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = classQuote
		case c == '\\':
			t[c] = classBackslash
		case c >= utf8.RuneSelf:
			t[c] = classMultibyte
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			t[c] = classEscaped
		}
	}
	return t
}()

// escape scans one escape sequence as encoding/json writes them.
func (s *canonScanner) escape() bool {
	b := s.b
	if s.i+1 >= len(b) {
		return false
	}
	switch b[s.i+1] {
	case '"', '\\', 'n', 'r', 't', 'b', 'f':
		s.i += 2
		return true
	case 'u':
	default:
		return false
	}
	if s.i+6 > len(b) {
		return false
	}
	switch u := string(b[s.i+2 : s.i+6]); u {
	case "003c", "003e", "0026", "2028", "2029":
	default:
		if u[0] != '0' || u[1] != '0' || u[2] != '0' && u[2] != '1' || !isLowerHex(u[3]) {
			return false
		}
		switch u[2:] {
		case "08", "09", "0a", "0c", "0d": // written \b, \t, \n, \f, \r
			return false
		}
	}
	s.i += 6
	return true
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
