//go:build !js

// Snapshots are files, which GOOS=js (SQLite WASM under Node) does not
// write.

package sandboxes_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"kubeplay/web/sandboxes"
)

// upload posts a snapshot as the page's upload form does.
func upload(t *testing.T, h http.Handler, snapshot []byte) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("action", "upload")
	fw, _ := mw.CreateFormFile("snapshot", "sandbox.db")
	fw.Write(snapshot)
	mw.Close()
	req := httptest.NewRequestWithContext(t.Context(), "POST", sandboxes.Path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandler_upload(t *testing.T) {
	h, play := newPage(t)
	doc := redirected(t, h, post(t, h, url.Values{"action": {"create"}, "scenario": {"dry-run"}}))
	id, _ := doc.One(t, "tr", "data-id", "*").Attr("data-id")
	rec := httptest.NewRecorder()
	play.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/playground/v1/sandboxes/"+id+"/snapshot", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("snapshot: %d %s", rec.Code, rec.Body)
	}
	doc = redirected(t, h, upload(t, h, rec.Body.Bytes()))
	if n := doc.One(t, "p", "class", "notice").Text(); !strings.HasSuffix(n, " from the snapshot.") || len(doc.All("tr", "data-id", "*")) != 2 {
		t.Errorf("after an upload: %q, %d sandboxes", n, len(doc.All("tr", "data-id", "*")))
	}
	bad := upload(t, h, []byte("not a database"))
	if bad.Code != http.StatusOK || !strings.Contains(bad.Body.String(), "POST /playground/v1/sandboxes: 400 not a kubeplay snapshot") {
		t.Errorf("a bad upload: %d %s", bad.Code, bad.Body)
	}
}
