package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kubeplay/store"
)

// The tests in this file drive kubeplay over HTTP; with -oracle they drive
// the real kube-apiserver instead and check the same expectations, which is
// where the expectations come from. Only the compaction test needs
// kubeplay's store (the oracle's etcd compacts on its own schedule): its
// answers were recorded from the oracle after compacting its etcd by hand
// (with --watch-cache-sizes=secrets#0, so that reads reach etcd).

type apiTarget struct {
	t      *testing.T
	base   string
	client *http.Client
	token  string
	st     store.Store // nil against the oracle
}

func newTarget(t *testing.T) *apiTarget {
	t.Helper()
	if *oracleURL != "" {
		return &apiTarget{t: t, base: *oracleURL, token: *oracleToken,
			client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	}
	h, st := newTestServerStore(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &apiTarget{t: t, base: srv.URL, client: srv.Client(), st: st}
}

type answer struct {
	code   int
	header http.Header
	body   map[string]any
}

func (a answer) meta(k string) any {
	md, _ := a.body["metadata"].(map[string]any)
	return md[k]
}

func (a answer) message() string { s, _ := a.body["message"].(string); return s }

// names lists the items of a list answer as name:resourceVersion.
func (a answer) names() []string {
	out := []string{}
	items, _ := a.body["items"].([]any)
	for _, it := range items {
		md := it.(map[string]any)["metadata"].(map[string]any)
		out = append(out, md["name"].(string))
	}
	return out
}

func (c *apiTarget) request(method, path string, body any) *http.Request {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req
}

func (c *apiTarget) do(method, path string, body any) answer {
	c.t.Helper()
	resp, err := c.client.Do(c.request(method, path, body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, header: resp.Header}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a.body); err != nil {
		c.t.Fatalf("%s %s: %d %q", method, path, resp.StatusCode, b)
	}
	return a
}

// rv creates or updates an object and returns its new resourceVersion.
func (c *apiTarget) write(method, path string, body any) int64 {
	c.t.Helper()
	a := c.do(method, path, body)
	if a.code >= 300 {
		c.t.Fatalf("%s %s: %d %s", method, path, a.code, a.message())
	}
	n, _ := strconv.ParseInt(a.meta("resourceVersion").(string), 10, 64)
	return n
}

type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

func (e event) String() string {
	md, _ := e.Object["metadata"].(map[string]any)
	if e.Type == "BOOKMARK" {
		return fmt.Sprintf("BOOKMARK %v", md["annotations"])
	}
	if e.Type == "ERROR" {
		return fmt.Sprintf("ERROR %v %v", e.Object["code"], e.Object["message"])
	}
	return e.Type + " " + fmt.Sprint(md["name"])
}

// watch reads a watch stream to its end (give timeoutSeconds).
func (c *apiTarget) watch(path string) (int, []event) {
	c.t.Helper()
	resp, err := c.client.Do(c.request("GET", path, nil))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []event
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			c.t.Fatalf("watch %s: %v in %q", path, err, sc.Bytes())
		}
		evs = append(evs, ev)
	}
	return resp.StatusCode, evs
}

func eventStrings(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.String())
	}
	return out
}

// namespace creates a namespace with a fresh name (the oracle keeps state
// between runs).
func (c *apiTarget) namespace(prefix string) string {
	c.t.Helper()
	name := prefix + "-" + strings.ToLower(rand.Text()[:6])
	c.write("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": name}})
	return name
}

func configMap(name string, labels map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "labels": labels}}
}

// fixture: c1..c5 created, then c1 updated and c3 deleted. revs[i] is the
// revision after the i-th write (revs[2] is the revision of c3's creation).
type fixture struct {
	c    *apiTarget
	base string
	revs []int64
}

func newFixture(t *testing.T) fixture {
	c := newTarget(t)
	ns := c.namespace("reads")
	f := fixture{c: c, base: "/api/v1/namespaces/" + ns + "/configmaps"}
	for i := 1; i <= 5; i++ {
		f.revs = append(f.revs, c.write("POST", f.base, configMap(fmt.Sprintf("c%d", i), map[string]any{"i": strconv.Itoa(i)})))
	}
	f.revs = append(f.revs, c.write("PUT", f.base+"/c1", configMap("c1", map[string]any{"i": "1x"})))
	f.c.do("DELETE", f.base+"/c3", nil)
	return f
}

func TestReads_ListResourceVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	at := func(i int) string { return strconv.FormatInt(f.revs[i], 10) }
	now := f.c.do("GET", f.base, nil).meta("resourceVersion")
	all := []string{"c1", "c2", "c4", "c5"}
	for _, tc := range []struct {
		query     string
		names     []string
		rv        any  // the list's resourceVersion; nil: the latest
		continued bool // whether the page has a continue token
		remaining any
	}{
		{query: "", names: all},
		{query: "resourceVersion=0", names: all},
		{query: "resourceVersion=0&resourceVersionMatch=NotOlderThan", names: all},
		{query: "resourceVersion=0&limit=2", names: all}, // served whole, like the watch cache
		{query: "resourceVersion=" + at(2), names: all},
		{query: "resourceVersion=" + at(2) + "&resourceVersionMatch=NotOlderThan", names: all},
		{query: "resourceVersion=" + at(2) + "&resourceVersionMatch=Exact", names: []string{"c1", "c2", "c3"}, rv: at(2)},
		{query: "resourceVersion=" + at(2) + "&resourceVersionMatch=Exact&limit=2", names: []string{"c1", "c2"}, rv: at(2), continued: true, remaining: 1.0},
		// A resourceVersion with a limit and no match is read exactly.
		{query: "resourceVersion=" + at(2) + "&limit=2", names: []string{"c1", "c2"}, rv: at(2), continued: true, remaining: 1.0},
		{query: "resourceVersion=" + at(2) + "&resourceVersionMatch=NotOlderThan&limit=2", names: []string{"c1", "c2"}, continued: true, remaining: 2.0},
		{query: "limit=2", names: []string{"c1", "c2"}, continued: true, remaining: 2.0},
		{query: "limit=2&labelSelector=i!=3", names: []string{"c1", "c2"}, continued: true},
		{query: "limit=4", names: all},
		{query: "limit=-1", names: all},
	} {
		t.Run(tc.query, func(t *testing.T) {
			a := f.c.do("GET", f.base+"?"+tc.query, nil)
			if a.code != 200 {
				t.Fatalf("code %d: %s", a.code, a.message())
			}
			if got := a.names(); !slices.Equal(got, tc.names) {
				t.Errorf("items %v, want %v", got, tc.names)
			}
			want := tc.rv
			if want == nil {
				want = now
			}
			if got := a.meta("resourceVersion"); got != want && tc.rv != nil {
				t.Errorf("resourceVersion %v, want %v", got, want)
			}
			if got := a.meta("continue") != nil; got != tc.continued {
				t.Errorf("continue present %v, want %v", got, tc.continued)
			}
			if got := a.meta("remainingItemCount"); got != tc.remaining {
				t.Errorf("remainingItemCount %v, want %v", got, tc.remaining)
			}
		})
	}
}

// The real server's answers to invalid combinations, verbatim.
func TestReads_InvalidOptions(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	ns := c.namespace("invalid")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	cm := c.write("POST", base, configMap("a", nil))
	c.write("POST", base, configMap("b", nil))
	tok := c.do("GET", base+"?limit=1", nil).meta("continue").(string)
	const invalid = `ListOptions.meta.k8s.io "" is invalid: `
	const unlessRV = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
	const withContinue = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"
	for _, tc := range []struct {
		path    string
		code    int
		message string
		causes  int
	}{
		{base + "?resourceVersionMatch=Exact", 422, invalid + unlessRV, 1},
		{base + "?resourceVersionMatch=NotOlderThan", 422, invalid + unlessRV, 1},
		{base + "?resourceVersionMatch=Bogus", 422, invalid + "[" + unlessRV + `, resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""]`, 2},
		{base + "?resourceVersion=0&resourceVersionMatch=Exact", 422, invalid + `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`, 1},
		{base + "?resourceVersionMatch=Exact&continue=" + tok, 422, invalid + "[" + unlessRV + ", " + withContinue + "]", 2},
		{base + "?resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=" + tok, 422, invalid + withContinue, 1},
		{base + "?resourceVersion=0&resourceVersionMatch=Exact&continue=" + tok, 422, invalid + "[" + withContinue + `, resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"]`, 2},
		{base + "?resourceVersionMatch=Bogus&continue=" + tok, 422, invalid + "[" + unlessRV + ", " + withContinue + `, resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""]`, 3},
		{base + "?resourceVersion=abc", 400, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`, 0},
		{base + "?resourceVersion=-1&resourceVersionMatch=Exact", 400, `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`, 0},
		{base + "?limit=abc", 400, `strconv.ParseInt: parsing "abc": invalid syntax`, 0},
		{base + "?limit=1&resourceVersion=" + strconv.FormatInt(cm, 10) + "&continue=" + tok, 400, "specifying resource version is not allowed when using continue", 0},
		{base + "?resourceVersion=abc&continue=" + tok, 400, "specifying resource version is not allowed when using continue", 0},
		{base + "?continue=abc", 400, "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value", 0},
		{base + "?continue=" + token(`{"v":"meta.k8s.io/v2","rv":5,"start":"x"}`), 400, "invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2", 0},
		{base + "?continue=" + token(`{"v":"meta.k8s.io/v1","rv":0,"start":"x"}`), 400, "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)", 0},
		{base + "?continue=" + token(`{"v":"meta.k8s.io/v1","rv":5,"start":"../x"}`), 400, "invalid continue token: continue key is not valid: ../x", 0},
		{base + "?watch=1&sendInitialEvents=true", 422, invalid + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan", 1},
		{base + "?watch=1&sendInitialEvents=false", 422, invalid + "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan", 1},
		{base + "?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan", 422, invalid + "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided", 1},
		{base + "?watch=1&resourceVersion=1&resourceVersionMatch=Exact", 422, invalid + `[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`, 2},
		{base + "?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact", 422, invalid + `[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`, 2},
		{base + "?watch=1&timeoutSeconds=abc", 400, `strconv.ParseInt: parsing "abc": invalid syntax`, 0},
		// Several faults: the one kube-apiserver checks first answers.
		{base + "?labelSelector=a+in+(b&resourceVersionMatch=Exact", 400, "unable to parse requirement: found '', expected: ',' or ')'", 0},
		{base + "?limit=abc&labelSelector=a+in+(b&resourceVersionMatch=Exact", 400, `strconv.ParseInt: parsing "abc": invalid syntax`, 0},
		{base + "?fieldSelector=x%3Dy&resourceVersionMatch=Exact", 422, invalid + unlessRV, 1},
		{base + "?continue=abc&resourceVersion=abc&labelSelector=a+in+(b", 400, "unable to parse requirement: found '', expected: ',' or ')'", 0},
		{base + "?watch=1&timeoutSeconds=abc&resourceVersionMatch=Exact", 400, `strconv.ParseInt: parsing "abc": invalid syntax`, 0},
		{base + "?watch=1&resourceVersion=abc&resourceVersionMatch=Exact", 422, invalid + `[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`, 2},
	} {
		t.Run(tc.path, func(t *testing.T) {
			a := c.do("GET", tc.path, nil)
			if a.code != tc.code || a.message() != tc.message {
				t.Errorf("got %d %q\nwant %d %q", a.code, a.message(), tc.code, tc.message)
			}
			var causes []any
			if d, ok := a.body["details"].(map[string]any); ok {
				causes, _ = d["causes"].([]any)
				if tc.code == 422 && (d["kind"] != "ListOptions" || d["group"] != "meta.k8s.io") {
					t.Errorf("details %v", d)
				}
			}
			if len(causes) != tc.causes {
				t.Errorf("causes %v, want %d", causes, tc.causes)
			}
		})
	}
}

// token encodes a continue token by hand.
func token(js string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(js))
}

func TestReads_MalformedResourceVersionOnGetAndWatch(t *testing.T) {
	t.Parallel()
	if *oracleURL != "" {
		t.Skip("kube-apiserver answers 500 here; kubeplay deliberately answers 400 with the same message")
	}
	c := newTarget(t)
	for _, path := range []string{"/api/v1/namespaces/default/configmaps/x?resourceVersion=abc", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=abc"} {
		a := c.do("GET", path, nil)
		if want := `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`; a.code != 400 || a.message() != want {
			t.Errorf("%s: %d %q", path, a.code, a.message())
		}
	}
}

func TestReads_FutureResourceVersion(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps?resourceVersion=99999999",
		"/api/v1/namespaces/default/configmaps?resourceVersion=99999999&resourceVersionMatch=Exact",
		"/api/v1/namespaces/default/configmaps?resourceVersion=99999999&limit=1",
		"/api/v1/namespaces/default/configmaps/kube-root-ca.crt?resourceVersion=99999999",
	} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			a := c.do("GET", path, nil)
			if a.code != 504 || !strings.HasPrefix(a.message(), "Timeout: Too large resource version: 99999999, current: ") || a.body["reason"] != "Timeout" {
				t.Errorf("got %d %q", a.code, a.message())
			}
			if got := a.header.Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After %q", got)
			}
			d, _ := a.body["details"].(map[string]any)
			if causes, _ := d["causes"].([]any); d["retryAfterSeconds"] != 1.0 || len(causes) != 1 || causes[0].(map[string]any)["reason"] != "ResourceVersionTooLarge" {
				t.Errorf("details %v", d)
			}
		})
	}
}

func TestReads_Pagination(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	ns := c.namespace("pages")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for i := range 5 {
		c.write("POST", base, configMap(fmt.Sprintf("c%d", i), nil))
	}
	first := c.do("GET", base+"?limit=2", nil)
	rv := first.meta("resourceVersion")
	// Changes between pages are not seen: every page is the first page's snapshot.
	c.write("PUT", base+"/c3", configMap("c3", map[string]any{"changed": "yes"}))
	c.do("DELETE", base+"/c2", nil)
	c.write("POST", base, configMap("c9", nil))
	tok := first.meta("continue").(string)
	second := c.do("GET", base+"?limit=2&continue="+url.QueryEscape(tok), nil)
	if got := second.names(); second.meta("resourceVersion") != rv || !slices.Equal(got, []string{"c2", "c3"}) || second.meta("remainingItemCount") != 1.0 {
		t.Errorf("second page at %v: %v remaining %v", second.meta("resourceVersion"), got, second.meta("remainingItemCount"))
	}
	if labels := second.body["items"].([]any)[1].(map[string]any)["metadata"].(map[string]any)["labels"]; labels != nil {
		t.Errorf("second page shows a change made after the first: %v", labels)
	}
	last := c.do("GET", base+"?limit=2&continue="+url.QueryEscape(second.meta("continue").(string)), nil)
	if got := last.names(); last.meta("resourceVersion") != rv || !slices.Equal(got, []string{"c4"}) || last.meta("continue") != nil || last.meta("remainingItemCount") != nil {
		t.Errorf("last page: %v %v", got, last.body["metadata"])
	}
	// Without a limit the rest comes in one page; with resourceVersion=0, too (the watch cache serves it).
	for _, q := range []string{"continue=" + url.QueryEscape(tok), "limit=2&resourceVersion=0&continue=" + url.QueryEscape(tok)} {
		if a := c.do("GET", base+"?"+q, nil); !slices.Equal(a.names(), []string{"c2", "c3", "c4"}) || a.meta("continue") != nil {
			t.Errorf("%s: %v %v", q, a.names(), a.body["metadata"])
		}
	}
}

func TestReads_Compaction(t *testing.T) {
	t.Parallel()
	if *oracleURL != "" {
		t.Skip("needs a compaction on demand; the expectations were recorded from the oracle by compacting its etcd")
	}
	c := newTarget(t)
	base := "/api/v1/namespaces/default/secrets"
	var revs []int64
	for i := range 4 {
		revs = append(revs, c.write("POST", base, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("s%d", i)}}))
	}
	tok := c.do("GET", base+"?limit=2", nil).meta("continue").(string)
	c.write("POST", base, map[string]any{"metadata": map[string]any{"name": "s9"}})
	c.do("DELETE", base+"/s0", nil)
	cur := c.do("GET", base, nil).meta("resourceVersion").(string)
	n, _ := strconv.ParseInt(cur, 10, 64)
	if err := c.st.Compact(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	old := strconv.FormatInt(revs[1], 10)
	for _, q := range []string{"resourceVersion=" + old + "&resourceVersionMatch=Exact", "resourceVersion=" + old + "&limit=1"} {
		if a := c.do("GET", base+"?"+q, nil); a.code != 410 || a.body["reason"] != "Expired" || a.message() != "The resourceVersion for the provided list is too old." {
			t.Errorf("%s: %d %v", q, a.code, a.body)
		}
	}
	// Not-older-than reads are served at the latest revision.
	if a := c.do("GET", base+"?resourceVersion="+old, nil); a.code != 200 || a.meta("resourceVersion") != cur {
		t.Errorf("list not older than a compacted revision: %d %v", a.code, a.body["metadata"])
	}
	if a := c.do("GET", base+"/s1?resourceVersion="+old, nil); a.code != 200 {
		t.Errorf("get not older than a compacted revision: %d %v", a.code, a.body)
	}
	a := c.do("GET", base+"?limit=2&continue="+url.QueryEscape(tok), nil)
	if a.code != 410 || a.body["reason"] != "Expired" || !strings.HasPrefix(a.message(), "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response") {
		t.Fatalf("continue after compaction: %d %v", a.code, a.body)
	}
	// The token in the 410 continues at the latest revision: s0 was deleted, s9 created.
	inconsistent := c.do("GET", base+"?limit=5&continue="+url.QueryEscape(a.meta("continue").(string)), nil)
	if got := inconsistent.names(); !slices.Equal(got, []string{"s2", "s3", "s9"}) || inconsistent.meta("resourceVersion") != cur {
		t.Errorf("inconsistent continuation: %v at %v", got, inconsistent.meta("resourceVersion"))
	}
	code, evs := c.watch(base + "?watch=1&timeoutSeconds=1&resourceVersion=" + old)
	if got := eventStrings(evs); code != 200 || !slices.Equal(got, []string{"ERROR 410 The resourceVersion for the provided watch is too old."}) {
		t.Errorf("watch from a compacted revision: %d %v", code, got)
	}
	if evs[0].Object["reason"] != "Expired" {
		t.Errorf("ERROR event %v", evs[0].Object)
	}
}

func TestReads_Watch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	initialEnd := "BOOKMARK map[k8s.io/initial-events-end:true]"
	current := []string{"ADDED c1", "ADDED c2", "ADDED c4", "ADDED c5"}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", current},
		{"allowWatchBookmarks=true", append(slices.Clone(current), initialEnd)},
		{"resourceVersion=0&allowWatchBookmarks=true", append(slices.Clone(current), initialEnd)},
		// From a revision: exactly the changes after it, no synthetic events.
		{"resourceVersion=" + strconv.FormatInt(f.revs[2], 10), []string{"ADDED c4", "ADDED c5", "MODIFIED c1", "DELETED c3"}},
		{"resourceVersion=" + strconv.FormatInt(f.revs[2], 10) + "&allowWatchBookmarks=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan", []string{"ADDED c4", "ADDED c5", "MODIFIED c1", "DELETED c3"}},
		// The streaming list: the state not older than the revision, then the bookmark.
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan", current},
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", append(slices.Clone(current), initialEnd)},
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=" + strconv.FormatInt(f.revs[2], 10), append(slices.Clone(current), initialEnd)},
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=i%3D2", []string{"ADDED c2", initialEnd}},
		// Without initial events, "0" and unset watch from now.
		{"sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true", nil},
		{"sendInitialEvents=false&resourceVersionMatch=NotOlderThan", nil},
		// A future revision with initial events: the 504 comes as an event after the wait.
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=99999999&timeoutSeconds=4", []string{"ERROR 504 Timeout: Too large resource version: 99999999, current: CURRENT"}},
		{"fieldSelector=metadata.name%3Dc4", []string{"ADDED c4"}},
		{"limit=1", current},
		{"resourceVersion=99999999", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			t.Parallel()
			query := tc.query
			if !strings.Contains(query, "timeoutSeconds") {
				query += "&timeoutSeconds=1"
			}
			code, evs := f.c.watch(f.base + "?watch=1&" + query)
			// Plain bookmarks come when the real server's timers say (see
			// the deadline subtest), so they are left out here.
			var got []string
			for _, e := range eventStrings(evs) {
				if e != "BOOKMARK <nil>" {
					got = append(got, currentRV.ReplaceAllString(e, "current: CURRENT"))
				}
			}
			if code != 200 || !slices.Equal(got, tc.want) {
				t.Errorf("got %d %v\nwant %v", code, got, tc.want)
			}
		})
	}
	t.Run("bookmark before the deadline", func(t *testing.T) {
		t.Parallel()
		// kubeplay sends one 2 s before the end; kube-apiserver's bookmark
		// timers (one-second buckets, etcd progress) send none to a few.
		latest := f.c.do("GET", f.base, nil).meta("resourceVersion").(string)
		// A change the watch does not see still advances the bookmark's
		// resourceVersion: it is the store's, not the last event's.
		elsewhere := f.c.write("POST", "/api/v1/namespaces/"+f.c.namespace("elsewhere")+"/configmaps", configMap("other", nil))
		_, evs := f.c.watch(f.base + "?watch=1&timeoutSeconds=5&allowWatchBookmarks=true&resourceVersion=" + latest)
		for _, e := range evs {
			md, _ := e.Object["metadata"].(map[string]any)
			if rv, _ := strconv.ParseInt(fmt.Sprint(md["resourceVersion"]), 10, 64); rv < elsewhere {
				t.Errorf("bookmark at resourceVersion %v, want at least %d", md["resourceVersion"], elsewhere)
			}
		}
		got := eventStrings(evs)
		if *oracleURL == "" && len(got) != 1 {
			t.Errorf("got %v, want one bookmark", got)
		}
		for _, e := range got {
			if e != "BOOKMARK <nil>" {
				t.Errorf("got %v, want only plain bookmarks", got)
			}
		}
	})
	t.Run("negative timeout", func(t *testing.T) {
		// The watch ends at once. kube-apiserver races its expired deadline:
		// asked repeatedly, it sends the events past the revision, nothing,
		// or an ERROR "context deadline exceeded" (500); kubeplay always
		// sends nothing, one of those answers.
		latest := f.c.do("GET", f.base, nil).meta("resourceVersion").(string)
		code, evs := f.c.watch(f.base + "?watch=1&timeoutSeconds=-5&resourceVersion=" + latest)
		if code != 200 || len(evs) != 0 {
			t.Errorf("%d %v", code, eventStrings(evs))
		}
	})
	t.Run("object path", func(t *testing.T) {
		if code, evs := f.c.watch(strings.Replace(f.base, "/api/v1/", "/api/v1/watch/", 1) + "/c4?timeoutSeconds=1"); code != 200 || !slices.Equal(eventStrings(evs), []string{"ADDED c4"}) {
			t.Errorf("/watch/.../c4: %d %v", code, eventStrings(evs))
		}
		// ?watch on an object's own path is a get.
		if a := f.c.do("GET", f.base+"/c4?watch=1", nil); a.code != 200 || a.body["kind"] != "ConfigMap" {
			t.Errorf("?watch on an object: %d %v", a.code, a.body)
		}
	})
	t.Run("bookmark carries only the resourceVersion", func(t *testing.T) {
		_, evs := f.c.watch(f.base + "?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dnone")
		if len(evs) == 0 || evs[0].String() != "BOOKMARK map[k8s.io/initial-events-end:true]" {
			t.Fatalf("%v", eventStrings(evs))
		}
		for i, ev := range evs {
			md, _ := ev.Object["metadata"].(map[string]any)
			keys := map[bool]int{true: 2, false: 1}[i == 0] // the first also has its annotation
			if ev.Type != "BOOKMARK" || len(ev.Object) != 3 || ev.Object["kind"] != "ConfigMap" || ev.Object["apiVersion"] != "v1" || len(md) != keys || md["resourceVersion"] == "" {
				t.Errorf("event %d: %v", i, ev.Object)
			}
		}
	})
}

var currentRV = regexp.MustCompile(`current: [0-9]+`)

// An update that moves an object out of a watch's selector arrives as
// DELETED, one that moves it in as ADDED.
func TestReads_WatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	ns := c.namespace("transitions")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	from := c.write("POST", base, configMap("a", map[string]any{"app": "x"}))
	moved := c.write("PUT", base+"/a", configMap("a", map[string]any{"app": "y"}))
	c.write("PUT", base+"/a", configMap("a", map[string]any{"app": "y", "more": "1"}))
	c.write("PUT", base+"/a", configMap("a", map[string]any{"app": "x"}))
	c.write("PUT", base+"/a", configMap("a", map[string]any{"app": "x", "more": "2"}))
	c.do("DELETE", base+"/a", nil)
	c.write("POST", base, configMap("b", map[string]any{"app": "y"}))
	_, evs := c.watch(fmt.Sprintf("%s?watch=1&timeoutSeconds=1&labelSelector=app%%3Dx&resourceVersion=%d", base, from))
	if got, want := eventStrings(evs), []string{"DELETED a", "ADDED a", "MODIFIED a", "DELETED a"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The DELETED for a move out carries the object as it was before the
	// update, at the update's resourceVersion.
	md := evs[0].Object["metadata"].(map[string]any)
	if l := md["labels"].(map[string]any); l["app"] != "x" || md["resourceVersion"] != strconv.FormatInt(moved, 10) {
		t.Errorf("DELETED object: %v", md)
	}
}

func TestReads_Selectors(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	ns := c.namespace("selectors")
	pods := "/api/v1/namespaces/" + ns + "/pods"
	notKnown := func(f string) string {
		return fmt.Sprintf(`%q is not a known field selector: only "metadata.name", "metadata.namespace"`, f)
	}
	for _, tc := range []struct {
		path, message string // message "": 200
	}{
		{pods + "?labelSelector=" + url.QueryEscape("a in (b"), "unable to parse requirement: found '', expected: ',' or ')'"},
		{pods + "?labelSelector=" + url.QueryEscape("a=b=c"), "found '=', expected: ',' or 'end of string'"},
		{pods + "?labelSelector=" + url.QueryEscape("!"), "unable to parse requirement: found '', expected: identifier"},
		{pods + "?labelSelector=" + url.QueryEscape("a,,b"), "found ',', expected: identifier after ','"},
		{pods + "?labelSelector=" + url.QueryEscape("a notin b"), "unable to parse requirement: found 'b' expected: '('"},
		{pods + "?labelSelector=" + url.QueryEscape("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=b"), `unable to parse requirement: <nil>: Invalid value: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": name part must be no more than 63 bytes`},
		{pods + "?labelSelector=" + url.QueryEscape("a==,a in (),x=y,z!=w,a>1,a in (b,c),!d,e notin (f),g"), ""},
		{pods + "?fieldSelector=" + url.QueryEscape("a in (b)"), "invalid selector: 'a in (b)'; can't understand 'a in (b)'"},
		{pods + "?fieldSelector=" + url.QueryEscape("a~b"), "invalid selector: 'a~b'; can't understand 'a~b'"},
		{pods + "?fieldSelector=" + url.QueryEscape("status.phase=Running,spec.nodeName=n,spec.restartPolicy=Always,spec.schedulerName=s,spec.serviceAccountName=sa,status.podIP=1.2.3.4,status.nominatedNodeName=n,spec.hostNetwork=true,status.podIPs=x,metadata.namespace=x,metadata.name!=y"), ""},
		{pods + "?fieldSelector=metadata.uid%3Dx", "field label not supported: metadata.uid"},
		{pods + "?fieldSelector=spec.containers.name%3Dx", "field label not supported: spec.containers.name"},
		{"/api/v1/events?fieldSelector=" + url.QueryEscape("involvedObject.kind=Pod,involvedObject.namespace=a,involvedObject.name=b,involvedObject.uid=c,involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f,reason=r,source=s,type=t,reportingComponent=c"), ""},
		{"/api/v1/events?fieldSelector=count%3D1", "field label not supported: count"},
		{"/apis/events.k8s.io/v1/events?fieldSelector=" + url.QueryEscape("regarding.kind=Pod,regarding.namespace=a,regarding.name=b,regarding.uid=c,regarding.apiVersion=v1,regarding.resourceVersion=1,regarding.fieldPath=f,reason=r,reportingController=c,type=t"), ""},
		{"/apis/events.k8s.io/v1/events?fieldSelector=source%3Dx", "field label not supported: source"},
		{"/api/v1/secrets?fieldSelector=type%3DOpaque", ""},
		{"/api/v1/namespaces?fieldSelector=status.phase%3DActive", ""},
		{"/api/v1/namespaces?fieldSelector=metadata.namespace%3Dx", "field label not supported: metadata.namespace"},
		{"/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse", ""},
		{"/api/v1/nodes?fieldSelector=spec.podCIDR%3Dx", "field label not supported: spec.podCIDR"},
		{"/api/v1/replicationcontrollers?fieldSelector=status.replicas%3D1", ""},
		{"/api/v1/services?fieldSelector=spec.clusterIP%3Dx,spec.type%3Dy", ""},
		{"/apis/batch/v1/jobs?fieldSelector=status.successful%3D1", ""},
		{"/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=spec.signerName%3Dx", ""},
		{"/apis/apps/v1/replicasets?fieldSelector=status.replicas%3D1", notKnown("status.replicas")},
		{"/apis/apps/v1/deployments?fieldSelector=status.replicas%3D1", notKnown("status.replicas")},
		{"/api/v1/configmaps?fieldSelector=data.a%3Db", notKnown("data.a")},
		{"/api/v1/persistentvolumeclaims?fieldSelector=spec.volumeName%3Dx", notKnown("spec.volumeName")},
		{"/api/v1/persistentvolumes?fieldSelector=metadata.namespace%3Dx", ""},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldSelector=x%3Dy", notKnown("x")},
	} {
		t.Run(tc.path, func(t *testing.T) {
			a := c.do("GET", tc.path, nil)
			switch {
			case tc.message == "" && a.code != 200:
				t.Errorf("%d %s", a.code, a.message())
			case tc.message != "" && (a.code != 400 || a.message() != tc.message || a.body["reason"] != "BadRequest"):
				t.Errorf("got %d %q\nwant 400 %q", a.code, a.message(), tc.message)
			}
		})
	}
}

// Field selectors see absent fields as the typed object has them.
func TestReads_FieldSelectorValues(t *testing.T) {
	t.Parallel()
	c := newTarget(t)
	ns := c.namespace("fields")
	jobs := "/apis/batch/v1/namespaces/" + ns + "/jobs"
	c.write("POST", jobs, map[string]any{"metadata": map[string]any{"name": "j"}, "spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}})
	for q, want := range map[string][]string{"status.successful%3D0": {"j"}, "status.successful%3D1": {}} {
		if a := c.do("GET", jobs+"?fieldSelector="+q, nil); !slices.Equal(a.names(), want) {
			t.Errorf("%s: %v, want %v", q, a.names(), want)
		}
	}
	// A pod's unset fields as the defaulted object has them.
	c.write("POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "default"}})
	pods := "/api/v1/namespaces/" + ns + "/pods"
	c.write("POST", pods, map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}})
	for q, want := range map[string][]string{
		"spec.restartPolicy=Always,spec.schedulerName=default-scheduler,spec.serviceAccountName=default,status.phase=Pending,spec.hostNetwork=false,spec.nodeName=,status.podIP=": {"p"},
		"status.podIPs=":        {"p"},
		"status.phase!=Pending": {},
	} {
		if a := c.do("GET", pods+"?fieldSelector="+url.QueryEscape(q), nil); !slices.Equal(a.names(), want) {
			t.Errorf("%s: %v, want %v", q, a.names(), want)
		}
	}
	secrets := "/api/v1/namespaces/" + ns + "/secrets"
	c.write("POST", secrets, map[string]any{"metadata": map[string]any{"name": "s"}, "type": "kubernetes.io/basic-auth", "stringData": map[string]any{"username": "u"}})
	for q, want := range map[string][]string{"type%3Dkubernetes.io%2Fbasic-auth": {"s"}, "type%3DOpaque": {}, "metadata.namespace%3D" + ns: {"s"}} {
		if a := c.do("GET", secrets+"?fieldSelector="+q, nil); !slices.Equal(a.names(), want) {
			t.Errorf("%s: %v, want %v", q, a.names(), want)
		}
	}
}
