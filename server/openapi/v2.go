package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The OpenAPI v2 document kube-apiserver v1.35.4 serves at /openapi/v2, in
// JSON and in its protobuf form (gnostic's openapi_v2.Document), recorded
// byte for byte and gzip-compressed (0.2 MB each instead of 2.1 and 1.8).
// With custom resources, the document is rebuilt with them (see
// SetCustomV2), its protobuf form by gnostic, as kube-apiserver makes it.
//
//go:embed spec/v2/swagger.json.gz spec/v2/swagger.pb.gz
var v2Documents embed.FS

const (
	v2JSON = "application/json"
	// v2Protobuf is the protobuf type clients ask for; kube-apiserver
	// answers with v2ProtobufResponse, the same with "." for "@".
	v2Protobuf         = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	v2ProtobufResponse = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

type v2Document struct {
	json, protobuf []byte
	etag           string
}

// loadV2 decompresses the v2 document once per process. Its ETag, for both
// forms, is the SHA-512 of the JSON form, as kube-apiserver's.
var loadV2 = sync.OnceValues(func() (*v2Document, error) {
	read := func(name string) ([]byte, error) {
		f, err := v2Documents.Open("spec/v2/" + name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		return io.ReadAll(z)
	}
	doc := &v2Document{}
	var err error
	if doc.json, err = read("swagger.json.gz"); err != nil {
		return nil, fmt.Errorf("openapi: v2 JSON: %w", err)
	}
	if doc.protobuf, err = read("swagger.pb.gz"); err != nil {
		return nil, fmt.Errorf("openapi: v2 protobuf: %w", err)
	}
	sum := sha512.Sum512(doc.json)
	doc.etag = `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	return doc, nil
})

// serveV2 answers /openapi/v2 in JSON or protobuf as Accept asks, and with
// an empty 406 for anything else, as kube-apiserver does. The document
// describes kube-apiserver's whole API, the resources kubeplay does not
// serve included: unlike v3, whose documents are per group version and
// listed only when served, v2 is one document, served unchanged but for
// the custom resources it gains.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	doc, err := loadV2()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	header := w.Header()
	header.Add("Vary", "Accept-Encoding")
	header.Add("Vary", "Accept")
	body, protobuf, etag := doc.json, func() ([]byte, error) { return doc.protobuf, nil }, doc.etag
	if c := h.v2.Load(); c != nil {
		if body, etag, err = c.document(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		protobuf = c.proto
	}
	switch negotiateV2(r.Header.Get("Accept")) {
	case v2JSON:
		header.Set("Content-Type", v2JSON)
	case v2Protobuf:
		if body, err = protobuf(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		header.Set("Content-Type", v2ProtobufResponse)
	default:
		header.Set("Content-Length", "0")
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	header.Set("Etag", etag)
	http.ServeContent(w, r, "", h.modTime, bytes.NewReader(body))
}

// negotiateV2 returns v2JSON, v2Protobuf or "" (not acceptable) for an
// Accept header: the clause with the highest quality wins, the first of
// equals, a wildcard after a named type of the same quality; no Accept
// means JSON. Like kube-apiserver, it does not treat q=0 as a refusal.
func negotiateV2(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return v2JSON
	}
	type clause struct {
		mediaType string
		q         float64
	}
	var clauses []clause
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		c := clause{mediaType: strings.ToLower(strings.TrimSpace(fields[0])), q: 1}
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					c.q = q
				}
			}
		}
		clauses = append(clauses, c)
	}
	wildcard := func(c clause) bool { return strings.HasSuffix(c.mediaType, "*") }
	slices.SortStableFunc(clauses, func(a, b clause) int {
		switch {
		case a.q != b.q:
			if a.q > b.q {
				return -1
			}
			return 1
		case wildcard(a) != wildcard(b):
			if wildcard(b) {
				return -1
			}
			return 1
		}
		return 0
	})
	for _, c := range clauses {
		switch c.mediaType {
		case v2JSON, "application/*", "*/*":
			return v2JSON
		case v2Protobuf, v2ProtobufResponse:
			return v2Protobuf
		}
	}
	return ""
}
