package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"kubeplay/server"
	"kubeplay/server/catalog"
	"kubeplay/server/openapi"
	"kubeplay/store"
)

// A target is an API server the mutations are sent to.
type target interface {
	// do sends method path with body (JSON, if any) and returns the
	// answer's status code and body; the error is a transport failure.
	do(ctx context.Context, method, path string, body []byte) (int, []byte, error)
}

type httpTarget struct {
	base, token string
	client      *http.Client
}

func newHTTPTarget(base, token string) *httpTarget {
	// The oracle and kubeplay serve self-signed certificates on loopback.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	return &httpTarget{base: strings.TrimSuffix(base, "/"), token: token, client: &http.Client{Transport: tr}}
}

func (t *httpTarget) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// inProcessTarget is a fresh kubeplay API server over an in-memory store,
// without the simulated cluster's controllers (the oracle runs none).
type inProcessTarget struct{ api http.Handler }

func newInProcessTarget(ctx context.Context) (*inProcessTarget, error) {
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		return nil, err
	}
	srv, err := server.New(ctx, server.Options{Store: st})
	if err != nil {
		return nil, err
	}
	return &inProcessTarget{api: srv}, nil
}

func (t *inProcessTarget) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	t.api.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), nil
}

// An answer is what a server said to one request: its status code and, for
// a failure, its Status's reason, message and causes.
type answer struct {
	Code    int     `json:"code"`
	Reason  string  `json:"reason,omitempty"`
	Message string  `json:"message,omitempty"`
	Causes  []cause `json:"causes,omitempty"`
}

type cause struct {
	Field   string `json:"field,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

func (a answer) String() string {
	if a.Code == 0 {
		return "not tried"
	}
	if a.Code < 300 {
		return fmt.Sprint(a.Code)
	}
	s := fmt.Sprintf("%d %s", a.Code, a.Reason)
	if len(a.Causes) == 0 {
		return s + ": " + a.Message
	}
	for _, c := range a.Causes {
		s += fmt.Sprintf("\n            [%s] %s: %s", c.Reason, c.Field, c.Message)
	}
	return s
}

var (
	uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// The service account token volume's name ends in random characters.
	tokenVolumePattern = regexp.MustCompile(`kube-api-access-[0-9a-z]{5}`)
)

// parseAnswer reads a server's answer, the run ID, UIDs and random names in
// its texts replaced by RUNID, UID and XXXXX, its causes sorted (kube-apiserver reports
// some in map order).
func parseAnswer(code int, body []byte, runID string) answer {
	a := answer{Code: code}
	if code < 300 {
		return a
	}
	var st struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Details struct {
			Causes []cause `json:"causes"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		st.Message = "not a Status: " + string(body)
	}
	norm := func(s string) string {
		s = uidPattern.ReplaceAllString(strings.ReplaceAll(s, runID, "RUNID"), "UID")
		return tokenVolumePattern.ReplaceAllString(s, "kube-api-access-XXXXX")
	}
	a.Reason, a.Message = st.Reason, norm(st.Message)
	for _, c := range st.Details.Causes {
		a.Causes = append(a.Causes, cause{Field: norm(c.Field), Reason: c.Reason, Message: norm(c.Message)})
	}
	slices.SortFunc(a.Causes, func(x, y cause) int {
		return cmp.Or(cmp.Compare(x.Field, y.Field), cmp.Compare(x.Reason, y.Reason), cmp.Compare(x.Message, y.Message))
	})
	return a
}

// same reports whether two answers agree: code, reason and causes, and the
// message when there are no causes.
func (a answer) same(b answer) bool {
	if a.Code != b.Code || a.Reason != b.Reason || !slices.Equal(a.Causes, b.Causes) {
		return false
	}
	return len(a.Causes) > 0 || a.Message == b.Message
}

// A record is one request of a run and its answer.
type record struct {
	Type     string `json:"type"`
	Verb     string `json:"verb"`
	Mutation string `json:"mutation"`
	Answer   answer `json:"answer"`
}

func (r record) key() string { return r.Type + " " + r.Verb + " " + r.Mutation }

// A result is one request's answers from both servers.
type result struct {
	Type, Verb, Mutation string
	Oracle, Kubeplay     answer
}

func (r result) same() bool { return r.Oracle.same(r.Kubeplay) }

// accepted is why a difference is kubeplay's choice, not a fault ("" if
// it is not): where kube-apiserver answers a bad input with a 500, kubeplay
// gives the 4xx it should have given.
func (r result) accepted() string {
	if !r.same() && r.Oracle.Code == http.StatusInternalServerError && r.Kubeplay.Code >= 400 && r.Kubeplay.Code < 500 {
		return "kube-apiserver answers this bad input with a 500; kubeplay gives the 4xx it should have given"
	}
	return ""
}

// differs reports a difference that is not accepted.
func (r result) differs() bool { return !r.same() && r.accepted() == "" }

// compare sends the corpus's mutations to both servers (at the same time,
// each its requests in order) and pairs their answers.
func compare(ctx context.Context, c corpus, runID string, oracle, kubeplay target) ([]result, error) {
	var (
		wg                   sync.WaitGroup
		fromOracle, fromKube []record
		errOracle, errKube   error
	)
	wg.Go(func() { fromOracle, errOracle = collect(ctx, c, runID, oracle) })
	wg.Go(func() { fromKube, errKube = collect(ctx, c, runID, kubeplay) })
	wg.Wait()
	if errOracle != nil {
		return nil, fmt.Errorf("oracle: %w", errOracle)
	}
	if errKube != nil {
		return nil, fmt.Errorf("kubeplay: %w", errKube)
	}
	return pair(fromOracle, fromKube), nil
}

// pair matches the records of the two servers by request, in the oracle's
// order then those only kubeplay has.
func pair(fromOracle, fromKube []record) []result {
	kube := map[string]answer{}
	for _, r := range fromKube {
		kube[r.key()] = r.Answer
	}
	var out []result
	seen := map[string]bool{}
	for _, r := range fromOracle {
		seen[r.key()] = true
		out = append(out, result{Type: r.Type, Verb: r.Verb, Mutation: r.Mutation, Oracle: r.Answer, Kubeplay: kube[r.key()]})
	}
	for _, r := range fromKube {
		if !seen[r.key()] {
			out = append(out, result{Type: r.Type, Verb: r.Verb, Mutation: r.Mutation, Kubeplay: r.Answer})
		}
	}
	return out
}

// collect sends every mutation of the corpus to t and records the answers.
// Per object: the mutated creates (dry runs), the create of the object
// itself, the mutated updates of what was stored (dry runs), its deletion.
// All happens in the namespace validation-<runID>, deleted at the end.
func collect(ctx context.Context, c corpus, runID string, t target) ([]record, error) {
	defs, err := openapi.Definitions()
	if err != nil {
		return nil, err
	}
	all, err := openapi.Schemas()
	if err != nil {
		return nil, err
	}
	d := schemas(all)
	ns := "validation-" + runID
	send := func(method, path string, obj map[string]any) (answer, map[string]any, error) {
		var body []byte
		if obj != nil {
			if body, err = json.Marshal(obj); err != nil {
				return answer{}, nil, err
			}
		}
		code, resp, err := t.do(ctx, method, path, body)
		if err != nil {
			return answer{}, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		var out map[string]any
		if code < 300 {
			_ = json.Unmarshal(resp, &out)
		}
		return parseAnswer(code, resp, runID), out, nil
	}
	nsObj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
	if a, _, err := send("POST", "/api/v1/namespaces", nsObj); err != nil {
		return nil, err
	} else if a.Code != http.StatusCreated {
		return nil, fmt.Errorf("creating namespace %s: %s", ns, a)
	}
	defer send("DELETE", "/api/v1/namespaces/"+ns, nil)
	// What the service account controller would have made (the oracle
	// runs no controllers): pods need it.
	sa := map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}
	if a, _, err := send("POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", sa); err != nil {
		return nil, err
	} else if a.Code != http.StatusCreated && a.Reason != "AlreadyExists" {
		return nil, fmt.Errorf("creating the default service account: %s", a)
	}

	var out []record
	for _, e := range c {
		gvk := e.gvk()
		res := catalog.LookupBuiltinKind(gvk)
		if res == nil {
			return nil, fmt.Errorf("corpus: %s is not a built-in kind", gvk)
		}
		obj := e.withRunID(runID)
		collection := "/apis/" + res.Group + "/" + res.Version
		if res.Group == "" {
			collection = "/api/" + res.Version
		}
		if res.Namespaced {
			obj["metadata"].(map[string]any)["namespace"] = ns
			collection += "/namespaces/" + ns
		}
		collection += "/" + res.Resource
		item := collection + "/" + obj["metadata"].(map[string]any)["name"].(string)
		muts := d.mutations(obj, d.resolve(all[defs[gvk]]))
		for _, h := range e.Mutations {
			patch := replaceStrings(deepCopy(h.Patch), func(s string) string { return strings.ReplaceAll(s, "RUNID", runID) }).(map[string]any)
			muts = append(muts, mutation{Name: h.Name, createOnly: h.Only == "create", updateOnly: h.Only == "update" || h.Subresource != "", subresource: h.Subresource, apply: mergePatch(patch)})
		}
		label := e.typeName()
		rec := func(verb, name string, a answer) {
			out = append(out, record{Type: label, Verb: verb, Mutation: e.name() + ": " + name, Answer: a})
		}
		for _, m := range muts {
			if m.updateOnly {
				continue
			}
			o := deepCopy(obj).(map[string]any)
			m.apply(o)
			a, _, err := send("POST", collection+"?dryRun=All", o)
			if err != nil {
				return nil, err
			}
			rec("create", m.Name, a)
		}
		a, stored, err := send("POST", collection, obj)
		if err != nil {
			return nil, err
		}
		rec("create", "valid object", a)
		if stored == nil {
			continue
		}
		for _, m := range muts {
			if m.createOnly {
				continue
			}
			path := item
			if m.subresource != "" {
				path += "/" + m.subresource
			}
			update := func() (answer, error) {
				o := deepCopy(stored).(map[string]any)
				m.apply(o)
				a, _, err := send("PUT", path+"?dryRun=All", o)
				return a, err
			}
			a, err := update()
			// A controller of the server wrote the object since (a CRD's
			// or a FlowSchema's conditions, in one write or more), sooner
			// or later on each: mutate what is stored now.
			for attempt := 0; err == nil && a.Code == http.StatusConflict && attempt < maxRereads; attempt++ {
				var got answer
				if got, stored, err = send("GET", item, nil); err == nil && got.Code == http.StatusOK {
					a, err = update()
				}
			}
			if err != nil {
				return nil, err
			}
			rec("update", m.Name, a)
		}
		// Deleted, not left to the namespace's deletion: the oracle runs no
		// namespace controller, and a Service would keep its node port.
		if _, _, err := send("DELETE", item, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxRereads bounds how often an update that conflicts with a controller's
// write is tried again on the object read anew.
const maxRereads = 5

// mergePatch applies a JSON merge patch (RFC 7386).
func mergePatch(patch map[string]any) func(map[string]any) {
	return func(obj map[string]any) {
		for k, v := range patch {
			switch v := v.(type) {
			case nil:
				delete(obj, k)
			case map[string]any:
				child, ok := obj[k].(map[string]any)
				if !ok {
					child = map[string]any{}
					obj[k] = child
				}
				mergePatch(v)(child)
			default:
				obj[k] = deepCopy(v)
			}
		}
	}
}

// writeGolden writes the oracle's answers to file, one JSON record a line,
// gzipped (the diffs in messages repeat much).
func writeGolden(file string, results []result) error {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for _, r := range results {
		line, err := json.Marshal(record{Type: r.Type, Verb: r.Verb, Mutation: r.Mutation, Answer: r.Oracle})
		if err != nil {
			return err
		}
		zw.Write(append(line, '\n'))
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// readGolden reads what writeGolden wrote.
func readGolden(file string) ([]record, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []record
	for line := range bytes.Lines(b) {
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// writeKnown writes the requests whose answers differ (and are not
// accepted), one a line.
func writeKnown(file string, results []result) error {
	var b strings.Builder
	for _, r := range results {
		if r.differs() {
			b.WriteString(r.key() + "\n")
		}
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

func (r result) key() string {
	return record{Type: r.Type, Verb: r.Verb, Mutation: r.Mutation}.key()
}
