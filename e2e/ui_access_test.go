package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_requestAs switches the UI between two users in headless Chromium:
// the same page is forbidden to bob and allowed to alice, and the request
// log shows who each request ran as and what rejected it.
func TestUI_requestAs(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, server)
	ctx := browsertest.New(t, 3*time.Minute)
	kubectl.Succeeds("create", "configmap", "demo", "--from-literal=greeting=hello")
	kubectl.Succeeds("create", "role", "cm-reader", "--verb=get,list", "--resource=configmaps")
	kubectl.Succeeds("create", "rolebinding", "alice-reads", "--role=cm-reader", "--user=alice")
	// A create the NamespaceLifecycle plugin rejects, for the log below.
	if out, err := kubectl.Run("create", "configmap", "lost", "-n", "nowhere"); err == nil {
		t.Fatalf("creating in a missing namespace succeeded: %s", out)
	}

	page := server + "/?r=v1/configmaps&ns=default"
	do(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(`table.objects`))
	switchTo := func(user, groups, ready string) {
		t.Helper()
		var ok bool
		browsertest.Eval(t, ctx, fmt.Sprintf(`(() => { const f = document.querySelector("form.request-as");
			f.elements.user.value = %q; f.elements.groups.value = %q; return true; })()`, user, groups), &ok)
		follow(t, ctx, `form.request-as button[type=submit]:not([name])`, ready)
	}

	switchTo("bob", "qa", `document.querySelector(".acting-as") !== null`)
	var bob struct{ Acting, Alerts string }
	browsertest.Eval(t, ctx, `({
		Acting: document.querySelector(".acting-as").textContent,
		Alerts: [...document.querySelectorAll(".alert")].map(a => a.textContent.replace(/\s+/g, " ").trim()).join("\n"),
	})`, &bob)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-request-as-bob.png")
	if bob.Acting != "acting as bob (qa)" || !strings.Contains(bob.Alerts,
		`Forbidden (403) configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default" The UI sent this request as bob (qa)`) {
		t.Errorf("as bob: %+v", bob)
	}

	switchTo("alice", "", `document.querySelector("table.objects") !== null`)
	var rows string
	browsertest.Eval(t, ctx, `[...document.querySelectorAll("table.objects tbody tr")].map(tr => tr.querySelector("td").textContent.trim()).join(",")`, &rows)
	if rows != "demo" {
		t.Errorf("as alice, the objects are %q", rows)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-request-as-alice.png")

	// The log, filtered by user: the UI's requests as bob (its reads, shown
	// on request), the list forbidden.
	do(t, ctx, chromedp.Navigate(server+"/ui/requests?user=bob&ui=show"), chromedp.WaitVisible(`section.requests[data-live="on"]`))
	var log struct {
		Users     []string
		Forbidden string
	}
	browsertest.Eval(t, ctx, `(() => {
		const li = [...document.querySelectorAll("li.entry")].find(li => li.querySelector(".target").textContent.startsWith("/api/v1/namespaces/default/configmaps"));
		li.querySelector("details").open = true;
		return {
			Users: [...new Set([...document.querySelectorAll("li.entry .user")].map(s => s.textContent))],
			Forbidden: li.querySelector(".status").textContent.trim() + " " + li.querySelector(".rejected").textContent + " | " +
				[...li.querySelectorAll(".access dt, .access dd")].map(e => e.textContent.trim()).join(" "),
		};
	})()`, &log)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-requests-as.png")
	if strings.Join(log.Users, ",") != "system:anonymous (as bob)" ||
		!strings.HasPrefix(log.Forbidden, "403 rejected by authorization | User system:anonymous (as bob) Groups qa, system:authenticated Authorization forbid") {
		t.Errorf("log %+v", log)
	}

	// kubectl's create in a missing namespace: admission's first stage said no.
	do(t, ctx, chromedp.Navigate(server+"/ui/requests?verb=create&status=4xx"), chromedp.WaitVisible(`section.requests[data-live="on"]`))
	var rejected string
	browsertest.Eval(t, ctx, `(() => {
		const li = document.querySelector("li.entry");
		li.querySelector("details").open = true;
		return li.querySelector(".rejected").textContent + " | " + li.querySelector(".admission").textContent.replace(/\s+/g, " ").trim();
	})()`, &rejected)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-requests-admission.png")
	if rejected != "rejected by NamespaceLifecycle | mutating NamespaceLifecycle rejected the request" {
		t.Errorf("the create in a missing namespace: %q", rejected)
	}

	// Back to the UI's own identity.
	do(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(`.acting-as`))
	follow(t, ctx, `form.request-as button[name=stop]`, `document.querySelector(".acting-as") === null && document.querySelector("table.objects") !== null`)
}
