package requests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"

	"kubeplay/playground/journal"
	"kubeplay/server/audit"
	"kubeplay/server/encoding"
)

// EntryProps is one request as the log shows it.
type EntryProps struct {
	Seq      int64
	Time     string // "15:04:05.000"
	Method   string
	Target   string // path and query, as sent
	Verb     string // Kubernetes verb, or the HTTP method for other paths
	Resource string // "deployments.apps", "" for non-resource paths
	Status   int    // 0 while no answer was sent
	Latency  string
	Client   string // "kubectl", "kube-controller-manager", ...
	// Controller names the controller of the cluster that sent the request
	// ("namespace-controller", "generic-garbage-collector", "kubelet", ...),
	// "" when a user or a client of theirs did; Simulated says it is one of
	// kubeplay's stand-ins rather than what kube-controller-manager runs.
	Controller string
	Simulated  bool
	// UIRead says this UI sent it to draw a page (a read; what a person
	// writes through the UI is theirs).
	UIRead bool
	// Command is the kubectl command that sent it ("kubectl apply") and
	// Session that command's run, from kubectl's Kubectl-Command and
	// Kubectl-Session headers, which newer kubectl versions send).
	Command, Session string
	Done             bool
	Request          MessageProps
	Response         MessageProps
	// Events are a watch's events; Watch says the response is a watch stream.
	Watch         bool
	Events        []EventProps
	DroppedEvents int
	Curl          string
	Kubectl       string // "" when no kubectl command sends this request
	// AuditAnnotations are what admission noted for the audit log, by key.
	AuditAnnotations []HeaderProps
	// User is who the request ran as: "alice", or "admin (as alice)" when
	// admin impersonated alice; "" before authentication. Names are the
	// users' and senders' names, Groups the groups it ran with.
	User   string
	Names  []string
	Groups []string
	// Authorization is the authorizer's decision and reason.
	Authorization string
	// Admission lists the admission stages the request went through.
	Admission []StageProps
	// RejectedBy names what refused the request: "authorization", a
	// check such as "RBAC escalation check", or an admission plugin; "" if
	// nothing did.
	RejectedBy string
}

// StageProps is one admission stage of a request.
type StageProps struct {
	Phase    string // "mutating" or "validating"
	Plugin   string // kube-apiserver's name: "NamespaceLifecycle", ...
	Detail   string // for ValidatingAdmissionPolicy: "policy p, binding b"
	Rejected bool
}

// MessageProps is a request or response's headers and body.
type MessageProps struct {
	Headers   []HeaderProps
	Body      string // pretty-printed when JSON
	Truncated bool
}

// HeaderProps is one header line.
type HeaderProps struct{ Name, Value string }

// EventProps is one watch event.
type EventProps struct {
	Time    string
	Type    string // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Summary string // "ConfigMap default/x rv 42"
	Data    string // pretty-printed
}

// StatusClass groups a status code as the filter does: "2xx", "4xx", ...
// and "pending" before an answer.
func (e EntryProps) StatusClass() string {
	if e.Status == 0 {
		return "pending"
	}
	return fmt.Sprintf("%dxx", e.Status/100)
}

func entryProps(e journal.Entry, host string) EntryProps {
	target := e.Path
	if e.Query != "" {
		target += "?" + e.Query
	}
	attrs := parse(e.Method, e.Path, e.Query)
	p := EntryProps{
		Seq: e.Seq, Time: e.Time.Format("15:04:05.000"), Method: e.Method, Target: target,
		Verb: attrs.verb, Resource: attrs.qualifiedResource(), Status: e.Status,
		Client: client(e.UserAgent), Done: e.Done,
		Request: messageProps(e.Request), Response: messageProps(e.Response),
		Curl: curl(e, host), Kubectl: kubectl(attrs, e),
	}
	if e.Done {
		p.Latency = latency(e.Latency)
	}
	auditProps(&p, e.Audit)
	p.Controller, p.Simulated = controller(e.UserAgent, e.Audit)
	p.UIRead = p.Client == uiAgent && e.Method == "GET"
	p.Command, p.Session = e.Request.Header.Get("Kubectl-Command"), e.Request.Header.Get("Kubectl-Session")
	if e.Watch != nil {
		p.Watch, p.DroppedEvents = true, e.Watch.Dropped
		for _, ev := range e.Watch.Events {
			p.Events = append(p.Events, eventProps(ev))
		}
	}
	return p
}

// auditProps fills in who p ran as and what decided about it.
func auditProps(p *EntryProps, a audit.Record) {
	if a.User != nil {
		p.User, p.Names, p.Groups = a.User.Name, []string{a.User.Name}, a.User.Groups
	}
	if by := a.ImpersonatedBy; by != nil && a.User != nil {
		p.User = by.Name + " (as " + a.User.Name + ")"
		p.Names = append(p.Names, by.Name)
	}
	if a.Decision != "" {
		p.Authorization = strings.TrimSpace(a.Decision + " " + a.Reason)
	}
	if a.Decision == "forbid" {
		p.RejectedBy = "authorization"
	}
	if a.RefusedBy != "" {
		p.RejectedBy = a.RefusedBy
	}
	for _, st := range a.Admission {
		sp := StageProps{Phase: st.Phase, Plugin: st.Plugin, Rejected: st.Rejected}
		if st.Policy != "" {
			sp.Detail = "policy " + st.Policy + ", binding " + st.Binding
		}
		if st.Rejected {
			p.RejectedBy = st.Plugin
		}
		p.Admission = append(p.Admission, sp)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Annotations)) {
		p.AuditAnnotations = append(p.AuditAnnotations, HeaderProps{Name: k, Value: a.Annotations[k]})
	}
}

func latency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	default:
		return d.Round(time.Millisecond).String()
	}
}

// client names the program behind a User-Agent the way people call it:
// its first product token ("kubectl/v1.35.0 (linux/amd64) kubernetes/x"
// is kubectl).
func client(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	name, _, _ = strings.Cut(name, " ")
	if name == "" {
		return "unknown"
	}
	return name
}

// uiAgent is the User-Agent product of this UI's own requests.
const uiAgent = "kubeplay-ui"

// controllerAgents are the User-Agent products of the cluster's own
// components, and whether kubeplay simulates each: its kubelets have no
// containers behind them, and its finalizer bots stand in for whatever
// controller owns a finalizer.
var controllerAgents = map[string]bool{
	"kube-controller-manager": false,
	"kube-scheduler":          false,
	"kubelet":                 true,
	"kubeplay-finalizer-bot":  true,
}

const (
	// simulatorUser is who kubeplay's simulated components (kubelets,
	// workload controllers, finalizer bots) act as.
	simulatorUser = "system:kubeplay-simulator"
	// controllerAccount prefixes the service accounts the controllers of
	// kube-controller-manager act as (--use-service-account-credentials),
	// and ends the User-Agent they send ("kube-controller-manager/v1.35.4
	// (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:namespace-controller").
	controllerAccount = "system:serviceaccount:kube-system:"
)

// controller classifies a request by who sent it: it names the controller
// of the cluster that did, "" if a user (or a client of theirs) did, and
// says whether the controller is one of kubeplay's simulated stand-ins.
// A controller is known by its User-Agent or by the user it authenticated
// as — kubeplay's simulator or a service account of kube-system, which are
// the cluster's own components' — not by a user it impersonates: someone
// acting as a controller with --as is still someone.
func controller(userAgent string, a audit.Record) (name string, simulated bool) {
	product, _, _ := strings.Cut(userAgent, "/")
	simulatedAgent, byAgent := controllerAgents[product]
	byAgent = byAgent && strings.HasPrefix(userAgent, product+"/")
	user := a.User
	if a.ImpersonatedBy != nil {
		user = a.ImpersonatedBy
	}
	var account string
	bySimulator := false
	if user != nil {
		bySimulator = user.Name == simulatorUser
		account, _ = strings.CutPrefix(user.Name, controllerAccount)
		if account == user.Name {
			account = ""
		}
	}
	if !byAgent && !bySimulator && account == "" {
		return "", false
	}
	simulated = byAgent && simulatedAgent || bySimulator
	if _, suffix, ok := strings.Cut(userAgent, "/"+controllerAccount); ok && byAgent && suffix != "" {
		name, _, _ = strings.Cut(suffix, " ")
		return name, simulated
	}
	switch {
	case account != "":
		return account, simulated
	case byAgent:
		return strings.TrimPrefix(product, "kubeplay-"), simulated
	default:
		return strings.TrimPrefix(simulatorUser, "system:"), simulated
	}
}

// ByPerson reports whether e was sent by a person or a client of theirs:
// neither the cluster's own components nor this UI.
func ByPerson(e journal.Entry) bool {
	name, _ := controller(e.UserAgent, e.Audit)
	return name == "" && client(e.UserAgent) != uiAgent
}

func messageProps(m journal.Message) MessageProps {
	p := MessageProps{Body: pretty(textBody(m)), Truncated: m.Truncated}
	names := make([]string, 0, len(m.Header))
	for name := range m.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range m.Header[name] {
			if name == "Authorization" {
				v = redact(v)
			}
			p.Headers = append(p.Headers, HeaderProps{Name: name, Value: v})
		}
	}
	return p
}

// redact keeps a credential's scheme and hides the secret.
func redact(v string) string {
	scheme, _, _ := strings.Cut(v, " ")
	return scheme + " <redacted>"
}

// textBody is a message's body as text: a protobuf body (kubectl sends
// built-in objects so) or a CBOR one decoded to the JSON it stands for,
// since the bytes mean nothing on screen or in a shell command.
func textBody(m journal.Message) []byte {
	mt, _, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if textType(mt) == "" || len(m.Body) == 0 {
		return m.Body
	}
	if mt == encoding.ApplyPatchCBOR {
		mt = encoding.CBOR // an apply configuration is an object too
	}
	if obj, err := encoding.DecodeObject(mt, m.Body); err == nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // shown as text: "<" reads better than "\u003c"
		if enc.Encode(obj) == nil {
			return bytes.TrimSpace(b.Bytes())
		}
	}
	return fmt.Appendf(nil, "(%d bytes of %s that do not decode)", len(m.Body), mt)
}

// textType is the media type of the JSON textBody shows for a binary body
// of media type mt, "" for a body shown as it is.
func textType(mt string) string {
	switch mt {
	case encoding.Protobuf, encoding.CBOR:
		return encoding.JSON
	case encoding.ApplyPatchCBOR:
		return "application/apply-patch+yaml" // JSON is YAML
	}
	return ""
}

// pretty indents a JSON body; other bodies are shown as they are.
func pretty(body []byte) string {
	var out bytes.Buffer
	if json.Valid(body) && json.Indent(&out, body, "", "  ") == nil {
		return out.String()
	}
	return string(body)
}

func eventProps(ev journal.Event) EventProps {
	p := EventProps{Time: ev.Time.Format("15:04:05.000"), Data: pretty(ev.Data)}
	var e struct {
		Type   string `json:"type"`
		Object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name            string `json:"name"`
				Namespace       string `json:"namespace"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Message string `json:"message"`
		} `json:"object"`
	}
	if json.Unmarshal(ev.Data, &e) != nil {
		return p
	}
	p.Type = e.Type
	md := e.Object.Metadata
	switch {
	case e.Type == "ERROR":
		p.Summary = e.Object.Message
	case e.Type == "BOOKMARK":
		p.Summary = "rv " + md.ResourceVersion
	default:
		name := md.Name
		if md.Namespace != "" {
			name = md.Namespace + "/" + name
		}
		p.Summary = strings.TrimSpace(e.Object.Kind + " " + name + " rv " + md.ResourceVersion)
	}
	return p
}

// curl is the request as a curl command against the address it was sent to.
func curl(e journal.Entry, host string) string {
	u := url.URL{Scheme: "http", Host: host, Path: e.Path, RawQuery: e.Query}
	var b strings.Builder
	b.WriteString("curl")
	if e.Method != "GET" {
		b.WriteString(" -X " + e.Method)
	}
	b.WriteString(" " + shellQuote(u.String()))
	for _, name := range []string{"Content-Type", "Accept"} {
		v := e.Request.Header.Get(name)
		if mt, _, _ := mime.ParseMediaType(v); name == "Content-Type" && textType(mt) != "" {
			v = textType(mt) // the body below is the JSON it decodes to
		}
		if v != "" {
			b.WriteString(" -H " + shellQuote(name+": "+v))
		}
	}
	if len(e.Request.Body) > 0 {
		b.WriteString(" --data-binary " + shellQuote(string(textBody(e.Request))))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
