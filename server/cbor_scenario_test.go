package server_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// CBOR answers are recorded as the JSON they stand for (so that they are
// normalized and compared like JSON answers) and, for a step that sets
// checkBytes, as the hex of their bytes with map keys in bytewise order:
// kube-apiserver shuffles map keys on purpose, so only that order is
// comparable byte for byte.

// cborDecoding decodes any CBOR kube-apiserver writes: byte strings (its
// strings) as []byte, map keys as strings.
var cborDecoding = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DefaultMapType:     reflect.TypeOf(map[string]any(nil)),
		ByteStringToString: cbor.ByteStringToStringAllowed,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// isCBOR reports whether a Content-Type is a CBOR one.
func isCBOR(contentType string) bool {
	return strings.HasPrefix(contentType, "application/cbor")
}

// cborAsJSON returns a CBOR body as JSON, a sequence (a watch) as a JSON
// array of its items. Every item must carry the self-described tag and
// every string be a byte string, as kube-apiserver writes them.
func cborAsJSON(t *testing.T, b []byte, seq bool) json.RawMessage {
	t.Helper()
	var items []any
	for rest := b; len(rest) > 0; {
		if !bytes.HasPrefix(rest, []byte{0xd9, 0xd9, 0xf7}) {
			t.Errorf("CBOR item without the self-described tag: %x", rest[:min(len(rest), 16)])
		}
		var v any
		var err error
		if rest, err = cborDecoding.UnmarshalFirst(rest, &v); err != nil {
			t.Fatalf("decoding CBOR %x: %v", b, err)
		}
		items = append(items, jsonValue(t, v))
	}
	var out any = items
	if !seq {
		if len(items) != 1 {
			t.Fatalf("%d CBOR items in a body: %x", len(items), b)
		}
		out = items[0]
	}
	j, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func jsonValue(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonValue(t, e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonValue(t, e)
		}
	case []byte:
		return string(x)
	case string:
		t.Errorf("text string %q in CBOR: kube-apiserver writes byte strings", x)
	case cbor.Tag:
		return jsonValue(t, x.Content) // the self-described tag of a watch event's object
	}
	return v
}

// sortedCBORHex is the hex of CBOR bytes with every map's entries in the
// bytewise order of their encoded keys, each item otherwise as encoded.
func sortedCBORHex(t *testing.T, b []byte) string {
	t.Helper()
	var out []byte
	for rest := b; len(rest) > 0; {
		item, n, err := sortedCBOR(rest)
		if err != nil {
			t.Fatalf("CBOR %x: %v", b, err)
		}
		out, rest = append(out, item...), rest[n:]
	}
	return hex.EncodeToString(out)
}

// sortedCBOR re-encodes the first data item of b with sorted maps,
// returning it and the length of the item in b.
func sortedCBOR(b []byte) ([]byte, int, error) {
	if len(b) == 0 {
		return nil, 0, fmt.Errorf("truncated")
	}
	major, info := b[0]>>5, b[0]&0x1f
	head := 1
	var arg uint64
	switch {
	case info < 24:
		arg = uint64(info)
	case info <= 27:
		size := 1 << (info - 24)
		if len(b) < 1+size {
			return nil, 0, fmt.Errorf("truncated")
		}
		for _, c := range b[1 : 1+size] {
			arg = arg<<8 | uint64(c)
		}
		head += size
	default:
		return nil, 0, fmt.Errorf("indefinite length or reserved head %#x", b[0])
	}
	switch major {
	case 0, 1, 7: // integers, floats and simple values: the head only
		return b[:head], head, nil
	case 2, 3: // strings
		end := head + int(arg)
		if end > len(b) {
			return nil, 0, fmt.Errorf("truncated")
		}
		return b[:end], end, nil
	case 6: // a tag and its content
		item, n, err := sortedCBOR(b[head:])
		return append(slices.Clone(b[:head]), item...), head + n, err
	}
	items := int(arg) // 4 (array) or 5 (map: keys and values)
	if major == 5 {
		items *= 2
	}
	parts := make([][]byte, items)
	n := head
	for i := range parts {
		item, m, err := sortedCBOR(b[n:])
		if err != nil {
			return nil, 0, err
		}
		parts[i], n = item, n+m
	}
	out := slices.Clone(b[:head])
	if major == 5 {
		entries := make([][2][]byte, 0, len(parts)/2)
		for i := 0; i < len(parts); i += 2 {
			entries = append(entries, [2][]byte{parts[i], parts[i+1]})
		}
		slices.SortFunc(entries, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
		for _, e := range entries {
			out = append(append(out, e[0]...), e[1]...)
		}
		return out, n, nil
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, n, nil
}
