package encoding_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/server/encoding"
)

// TestWriteJSONAround answers as WriteJSON answers the same bytes: the same
// headers and, once decompressed, the same body, compressed or not, with a
// part sent again (compressed the second time from what the first made).
func TestWriteJSONAround(t *testing.T) {
	item := `{"metadata":{"name":"a"},"data":{"k":"v"}},`
	for _, c := range []struct {
		name       string
		head, tail string
		items      int
	}{
		{"small", `{"kind":"ConfigMapList","items":[`, `]}`, 3},
		{"empty part", `{"kind":"ConfigMapList","items":[`, `]}`, 0},
		{"at the threshold", `{"items":[`, `]}`, 0},
		{"large", `{"kind":"ConfigMapList","items":[`, `]}`, 10000},
		{"a head of several stored blocks", `{"h":"` + strings.Repeat("h", 200000) + `","items":[`, `]}`, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := strings.Repeat(item, c.items)
			if c.name == "at the threshold" {
				raw = strings.Repeat("x", 128*1024-len(c.head)-len(c.tail))
			}
			part := encoding.NewPart([]byte(raw))
			for _, accept := range []string{"", "gzip", "gzip", "deflate"} {
				want := httptest.NewRecorder()
				wr := httptest.NewRequest("GET", "/", nil)
				wr.Header.Set("Accept-Encoding", accept)
				body := c.head + raw + c.tail
				encoding.WriteJSON(want, wr, 200, len(body), func(yield func([]byte) bool) { yield([]byte(body)) })

				got := httptest.NewRecorder()
				encoding.WriteJSONAround(got, wr, 200, []byte(c.head), part, []byte(c.tail))
				if fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) || got.Code != want.Code {
					t.Fatalf("Accept-Encoding %q: %d %v, want %d %v", accept, got.Code, got.Header(), want.Code, want.Header())
				}
				if g, w := decoded(t, got), decoded(t, want); g != w {
					t.Fatalf("Accept-Encoding %q: body of %d bytes, want %d: %.200q", accept, len(g), len(w), g)
				}
			}
		})
	}
}

// decoded is rec's body, decompressed if it says it is compressed (gzip's
// reader checks the checksum and the length).
func decoded(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Header().Get("Content-Encoding") != "gzip" {
		return rec.Body.String()
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(rec.Body); len(rest) > 0 {
		t.Fatalf("%d bytes after the gzip stream", len(rest))
	}
	return string(b)
}
