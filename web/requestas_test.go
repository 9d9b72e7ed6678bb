//go:build !js

package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"kubeplay/playground/journal"
	"kubeplay/web"
	"kubeplay/web/internal/htmltest"
)

// TestSite_requestAs switches the UI to users RBAC treats differently and
// checks that its pages' API requests run as them, while other clients'
// requests do not.
func TestSite_requestAs(t *testing.T) {
	sb, _ := openSandbox(t)
	site := web.New(sb)
	send := func(method, target, contentType, body string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		site.ServeHTTP(rec, req)
		return rec
	}
	// As the anonymous administrator (kubectl with no kubeconfig): alice may
	// list ConfigMaps in default, bob nothing.
	for path, body := range map[string]string{
		"/api/v1/namespaces/default/configmaps": `{"metadata":{"name":"app-config"}}`,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles": `{"metadata":{"name":"cm-reader"},
			"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings": `{"metadata":{"name":"alice-reads"},
			"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`,
	} {
		if rec := send("POST", path, "application/json", body); rec.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	page := "/?r=v1/configmaps&ns=default"
	switchTo := func(user, groups string) {
		t.Helper()
		form := url.Values{"user": {user}, "groups": {groups}, "back": {page}}
		if rec := send("POST", "/ui/as", "application/x-www-form-urlencoded", form.Encode()); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page {
			t.Fatalf("switching to %q: %d %q", user, rec.Code, rec.Header().Get("Location"))
		}
	}

	switchTo("bob", "qa")
	doc := htmltest.Parse(t, send("GET", page, "", "").Body)
	alert := strings.Join(htmltest.Texts(doc.All("div", "class", "alert")), "\n")
	if !strings.Contains(alert, `Forbidden (403) configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default"`) ||
		!strings.Contains(alert, "The UI sent this request as bob (qa)") {
		t.Errorf("as bob, the page says %q", alert)
	}
	if got := doc.One(t, "span", "class", "acting-as").Text(); got != "acting as bob (qa)" {
		t.Errorf("the header says %q", got)
	}
	// The journal has the page's list as bob, sent by the UI's own user.
	var last journal.Entry
	entries, _ := sb.Journal().Page(0, 0)
	for _, e := range entries {
		if e.Path == "/api/v1/namespaces/default/configmaps" && e.Method == "GET" && e.UserAgent == "kubeplay-ui" {
			last = e
		}
	}
	if a := last.Audit; last.Status != 403 || a.User == nil || a.User.Name != "bob" ||
		strings.Join(a.User.Groups, ",") != "qa,system:authenticated" || a.ImpersonatedBy == nil || a.ImpersonatedBy.Name != "system:anonymous" {
		t.Errorf("journal: %d %+v", last.Status, a)
	}

	// The editor's write as bob: the API's 403, and as whom it was sent.
	edit := url.Values{"action": {"create"}, "r": {"v1/configmaps"}, "ns": {"default"}, "yaml": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-bob\n"}}
	doc = htmltest.Parse(t, send("POST", "/ui/edit", "application/x-www-form-urlencoded", edit.Encode()).Body)
	if code, hint := doc.One(t, "span", "class", "code").Text(), doc.One(t, "p", "class", "as-hint").Text(); code != "403 Forbidden" ||
		hint != `The UI sent this request as bob (qa) (see "Request as" above).` {
		t.Errorf("the editor's create as bob: %q, %q", code, hint)
	}

	switchTo("alice", "")
	// alice may list the ConfigMaps, not the namespaces of the selector.
	doc = htmltest.Parse(t, send("GET", page, "", "").Body)
	alert = strings.Join(htmltest.Texts(doc.All("div", "class", "alert")), "\n")
	if strings.Contains(alert, "configmaps is forbidden") || !strings.Contains(alert, `namespaces is forbidden: User "alice" cannot list resource "namespaces"`) {
		t.Errorf("as alice, the page says %q", alert)
	}
	if got := htmltest.Texts(doc.All("table", "class", "objects")); len(got) != 1 || !strings.Contains(got[0], "app-config") {
		t.Errorf("as alice, the objects table is %q", got)
	}
	// Other clients are not impersonated.
	if rec := send("GET", "/api/v1/namespaces/default/secrets", "", ""); rec.Code != http.StatusOK {
		t.Errorf("kubectl's request while the UI acts as alice: %d", rec.Code)
	}

	send("POST", "/ui/as", "application/x-www-form-urlencoded", url.Values{"stop": {"1"}, "back": {page}}.Encode())
	doc = htmltest.Parse(t, send("GET", page, "", "").Body)
	if doc.Has("span", "class", "acting-as") || doc.Has("div", "class", "alert") || !doc.Has("table", "class", "objects") {
		t.Errorf("after stopping, the page still acts as someone")
	}
}
