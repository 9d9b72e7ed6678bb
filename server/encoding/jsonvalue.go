package encoding

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// writeValue writes v as encoding/json's Encoder writes it (map keys
// sorted, HTML characters escaped), without the newline. The values
// objects are made of (maps, lists, strings, booleans, json.Numbers and
// integers) are written here; anything else, and strings that need
// escaping, go through encoding/json: its reflection over every map of an
// object was most of a write's encoding.
func writeValue(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeString(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
	case int:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(v), 10))
	case json.Number:
		if !isNumber(string(v)) {
			return writeWithEncoder(b, v) // "" (0) or its error
		}
		b.WriteString(string(v))
	case map[string]any:
		if v == nil {
			b.WriteString("null")
			return nil
		}
		return writeOrdered(b, v, nil, nil)
	case []any:
		if v == nil {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return writeWithEncoder(b, v)
	}
	return nil
}

// writeWithEncoder writes v through encoding/json.
func writeWithEncoder(b *bytes.Buffer, v any) error {
	if err := json.NewEncoder(b).Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// writeString writes s quoted; one that needs escaping (quotes,
// backslashes, control and HTML characters, U+2028/2029, invalid UTF-8) is
// written by encoding/json.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			_ = writeWithEncoder(b, s) // a string always encodes
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// isNumber reports whether s is a JSON number literal.
func isNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}
