package openapi

import "testing"

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`{"rule":"self.size() \u003e 0 \u0026\u0026 a \u003c b"}`: `{"rule":"self.size() > 0 && a < b"}`,
		`{"a":"\\u003c stays escaped","b":"\u00e9\n"}`:            `{"a":"\\u003c stays escaped","b":"\u00e9\n"}`,
		`"ends with \\"`: `"ends with \\"`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}
