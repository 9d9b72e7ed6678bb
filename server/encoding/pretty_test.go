package encoding

import (
	"net/http/httptest"
	"testing"
)

// TestPretty checks ?pretty as kube-apiserver v1.35.4 reads it (asked with
// a client that is not curl, whose answers are indented regardless).
func TestPretty(t *testing.T) {
	for query, want := range map[string]bool{
		"": false, "pretty=true": true, "pretty=True": true, "pretty=t": true, "pretty=1": true,
		"pretty=yes": false, "pretty=0": false, "pretty=false": false,
	} {
		r := httptest.NewRequest("GET", "/api/v1/namespaces/default?"+query, nil)
		r.Header.Set("User-Agent", "go")
		if got := Pretty(r); got != want {
			t.Errorf("?%s: pretty %v, kube-apiserver %v", query, got, want)
		}
	}
}
