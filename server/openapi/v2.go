package openapi

import (
	"bytes"
	"crypto/sha512"
	_ "embed" // recordedV2
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"kubeplay/server/encoding"
)

// recordedV2 is the OpenAPI v2 document kube-apiserver v1.35.4 serves at
// /openapi/v2, recorded byte for byte. Embedded uncompressed, it shares
// its compression in the browser's download with the v3 documents (0.1 MB
// brotli instead of 0.2 MB gzip).
//
//go:embed spec/v2/swagger.json
var recordedV2 []byte

const (
	v2JSON = "application/json"
	// v2Protobuf is the protobuf type clients ask for; kube-apiserver
	// answers with v2ProtobufResponse, the same with "." for "@".
	v2Protobuf         = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	v2ProtobufResponse = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// recordedV2ETag is the ETag of both forms of the document: the SHA-512 of
// the JSON form, as kube-apiserver's.
var recordedV2ETag = sync.OnceValue(func() string {
	sum := sha512.Sum512(recordedV2)
	return `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
})

// recordedV2Proto is the document's protobuf form, made once per process
// on first demand.
var recordedV2Proto = sync.OnceValues(protoV2)

// protoV2 makes the recorded document's protobuf form (gnostic's
// openapi_v2.Document) from the JSON, as kube-apiserver makes it: the same
// bytes (TestOpenAPIV2_MatchesOracle), in ~0.4 s natively
// (BenchmarkProtoV2), for 0.25 MB less download than embedding them (they
// do not compress).
func protoV2() ([]byte, error) {
	doc, err := parseV2(recordedV2, openapi_v2.NewDocument)
	if err != nil {
		return nil, fmt.Errorf("openapi: v2 protobuf: %w", err)
	}
	return proto.Marshal(doc)
}

// serveV2 answers /openapi/v2 in JSON or protobuf as Accept asks, and with
// an empty 406 for anything else, as kube-apiserver does. The document
// describes kube-apiserver's whole API, the resources kubeplay does not
// serve included: unlike v3, whose documents are per group version and
// listed only when served, v2 is one document, served unchanged but for
// the custom resources it gains.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	header := w.Header()
	header.Add("Vary", "Accept-Encoding")
	header.Add("Vary", "Accept")
	body, protobuf, etag := recordedV2, recordedV2Proto, recordedV2ETag()
	if c := h.v2.Load(); c != nil {
		var err error
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
		var err error
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
	if r.Method == http.MethodGet && encoding.AcceptsGzip(r) {
		// 2 MB of JSON is 0.2 MB gzipped; kube-apiserver compresses it too.
		gw, done := encoding.Gzip(w)
		defer done()
		w = gw
	}
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
