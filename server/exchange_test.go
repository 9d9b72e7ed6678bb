package server_test

import (
	"crypto/sha512"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// An exchange is one request and kube-apiserver's answer to it, headers
// included (the scenarios record bodies only). Tests list the requests;
// the answers live in testdata/oracle/exchanges/<test>.json and are
// re-recorded against a freshly started oracle with
//
//	go test ./server -run '<test>$' -oracle https://127.0.0.1:<port> -oracle-token oracle-token
type exchange struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	// Response: the status code, the headers named in exchangeHeaders that
	// were present, and the body.
	Code           int               `json:"code"`
	ResponseHeader map[string]string `json:"responseHeader"`
	// Body is the body, or "sha512:<hex>" of one above maxExchangeBody.
	Body string `json:"body"`
}

// maxExchangeBody is the size above which a body is recorded by its hash.
const maxExchangeBody = 64 << 10

// exchangeHeaders are the response headers recorded; the others (Date,
// Audit-Id, priority-and-fairness uids) identify one request or one server.
var exchangeHeaders = []string{
	"Cache-Control", "Content-Type", "Etag", "Vary", "X-Content-Type-Options", "Location", "Expires",
	"Last-Modified", "Accept-Ranges", "Content-Encoding",
}

func (e *exchange) request(t *testing.T, base string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(e.Method, base+e.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range e.Header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "kubeplay-exchanges")
	return req
}

func (e *exchange) read(t *testing.T, resp *http.Response) {
	t.Helper()
	b := readBody(t, resp) // compared as what it stands for: two compressors differ in bytes
	e.Code, e.Body, e.ResponseHeader = resp.StatusCode, string(b), map[string]string{}
	if len(b) > maxExchangeBody {
		sum := sha512.Sum512(b)
		e.Body = "sha512:" + hex.EncodeToString(sum[:])
	}
	for _, h := range exchangeHeaders {
		if v := resp.Header.Get(h); v != "" {
			e.ResponseHeader[h] = v
		}
	}
}

// exchanges returns the oracle's answers to requests (recording them first
// when -oracle is set) and a function that sends one to kubeplay's handler h.
func exchanges(t *testing.T, h http.Handler, requests []exchange) (oracle []exchange, send func(exchange) exchange) {
	t.Helper()
	golden := filepath.Join("testdata", "oracle", "exchanges", t.Name()+".json")
	if *oracleURL != "" {
		client := &http.Client{
			Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		for i := range requests {
			req := requests[i].request(t, *oracleURL)
			req.Header.Set("Authorization", "Bearer "+*oracleToken)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			requests[i].read(t, resp)
		}
		out, _ := json.MarshalIndent(requests, "", "  ")
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &oracle); err != nil {
		t.Fatal(err)
	}
	if len(oracle) != len(requests) {
		t.Fatalf("%s has %d exchanges, the test %d: re-record it", golden, len(oracle), len(requests))
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return oracle, func(e exchange) exchange {
		resp, err := client.Do(e.request(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		e.read(t, resp)
		return e
	}
}

// checkExchange reports where got differs from the oracle's answer want:
// the status code, the headers (Last-Modified and Expires name other
// instants, so only whether they are present and well-formed), and the body
// when body is true.
func checkExchange(t *testing.T, got, want exchange, body bool) {
	t.Helper()
	gotHeader, wantHeader := maps.Clone(got.ResponseHeader), maps.Clone(want.ResponseHeader)
	for _, name := range []string{"Last-Modified", "Expires"} {
		if _, err := time.Parse(time.RFC1123, gotHeader[name]); err == nil && wantHeader[name] != "" {
			gotHeader[name], wantHeader[name] = "(a time)", "(a time)"
		}
	}
	if got.Code != want.Code || !reflect.DeepEqual(gotHeader, wantHeader) || body && got.Body != want.Body {
		t.Errorf("%s %s %v: %d %v %.300q\noracle: %d %v %.300q", want.Method, want.Path, want.Header,
			got.Code, got.ResponseHeader, got.Body, want.Code, want.ResponseHeader, want.Body)
	}
}
