package requests

import (
	"mime"
	"net/url"
	"strings"

	"kubeplay/playground/journal"
)

// kubectl returns the kubectl command that sends the same request, or ""
// when none does. A request body is piped in.
func kubectl(a attributes, e journal.Entry) string {
	q, _ := url.ParseQuery(e.Query)
	target := e.Path
	if e.Query != "" {
		target += "?" + e.Query
	}
	switch {
	case e.Path == "/version" && e.Method == "GET":
		return "kubectl version"
	case a.discovery || a.nonResource:
		if e.Method != "GET" {
			return ""
		}
		return "kubectl get --raw " + shellQuote(target)
	case a.subresource != "" && a.subresource != "status" && a.subresource != "scale":
		return ""
	}
	typ := a.qualifiedResource()
	scope := ""
	if a.namespace != "" {
		scope = " -n " + a.namespace
	}
	var flags []string
	if a.subresource != "" {
		flags = append(flags, "--subresource="+a.subresource)
	}
	if q.Get("dryRun") == "All" {
		flags = append(flags, "--dry-run=server")
	}
	selectors := func() {
		if s := q.Get("labelSelector"); s != "" {
			flags = append(flags, "-l "+shellQuote(s))
		}
		if s := q.Get("fieldSelector"); s != "" {
			flags = append(flags, "--field-selector "+shellQuote(s))
		}
	}
	withBody := func(cmd string) string {
		if len(e.Request.Body) == 0 {
			return ""
		}
		return "echo " + shellQuote(string(textBody(e.Request))) + " | " + cmd
	}
	join := func(words ...string) string {
		return strings.Join(append(words, flags...), " ") + scope
	}
	switch a.verb {
	case "get":
		return join("kubectl get", typ, a.name, "-o yaml")
	case "list", "watch":
		if a.namespace == "" && a.resource != "" {
			scope = " -A"
		}
		selectors()
		if a.verb == "watch" {
			flags = append(flags, "--watch")
		}
		return join("kubectl get", typ)
	case "create":
		return withBody(join("kubectl create -f -"))
	case "update":
		return withBody(join("kubectl replace -f -"))
	case "patch":
		return withBody(patchCommand(typ, a.name, e.Request.Header.Get("Content-Type"), q, join))
	case "delete":
		if p := q.Get("propagationPolicy"); p != "" {
			flags = append(flags, "--cascade="+strings.ToLower(p))
		}
		return join("kubectl delete", typ, a.name)
	case "deletecollection":
		selectors()
		if q.Get("labelSelector") == "" && q.Get("fieldSelector") == "" {
			flags = append(flags, "--all")
		}
		return join("kubectl delete", typ)
	}
	return ""
}

func patchCommand(typ, name, contentType string, q url.Values, join func(...string) string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/apply-patch+yaml":
		cmd := "kubectl apply --server-side -f -"
		if m := q.Get("fieldManager"); m != "" {
			cmd += " --field-manager=" + shellQuote(m)
		}
		if q.Get("force") == "true" {
			cmd += " --force-conflicts"
		}
		return join(cmd)
	case "application/json-patch+json":
		return join("kubectl patch", typ, name, "--type=json --patch-file=/dev/stdin")
	case "application/merge-patch+json":
		return join("kubectl patch", typ, name, "--type=merge --patch-file=/dev/stdin")
	case "application/strategic-merge-patch+json":
		return join("kubectl patch", typ, name, "--type=strategic --patch-file=/dev/stdin")
	}
	return ""
}
