package encoding

import (
	"bytes"
	"encoding/json"
	"testing"
)

// writeValue must write what encoding/json's Encoder writes, for any value
// a JSON document decodes into (numbers as json.Number, as objects are
// decoded, and as float64), and for the Go values objects hold besides.
func FuzzWriteValue(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"z":"<&>","y":"\u2028\u0001é\"\\"}}`,
		`[1.5e10,-0,0.001,1E+2,"x",{}]`, `"\ud800"`, `{"":{"a\tb":[]}}`, `null`, `-12345678901234567890`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, useNumber := range []bool{true, false} {
			dec := json.NewDecoder(bytes.NewReader(data))
			if useNumber {
				dec.UseNumber()
			}
			var v any
			if dec.Decode(&v) != nil {
				return
			}
			compareWithEncoder(t, v)
		}
	})
}

func TestWriteValue_GoValues(t *testing.T) {
	for _, v := range []any{
		map[string]any(nil), []any(nil), map[string]any{"n": int64(-7), "i": 3, "e": json.Number(""), "o": Ordered{"b": "<", "a": 1}},
		[]any{[]string{"x"}, map[string]string{"k": "v"}, float64(1e21), 1.5},
	} {
		compareWithEncoder(t, v)
	}
	var b bytes.Buffer
	if err := writeValue(&b, map[string]any{"bad": json.Number("1x")}); err == nil {
		t.Errorf("an invalid json.Number was written: %s", b.Bytes())
	}
}

func compareWithEncoder(t *testing.T, v any) {
	t.Helper()
	var want bytes.Buffer
	wantErr := json.NewEncoder(&want).Encode(v)
	var got bytes.Buffer
	gotErr := writeValue(&got, v)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%#v: error %v, encoding/json's %v", v, gotErr, wantErr)
	}
	if wantErr == nil && got.String()+"\n" != want.String() {
		t.Fatalf("%#v:\nwrote         %s\nencoding/json %s", v, got.String(), want.String())
	}
}
