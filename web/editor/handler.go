package editor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"kubeplay/server/inproc"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/internal/status"
	"kubeplay/web/internal/yamlview"
	"kubeplay/web/layout"
)

// Path is where the editor is mounted.
const Path = "/ui/edit"

// Actions the editor sends.
const (
	ActionCreate    = "create"    // POST the object
	ActionReplace   = "replace"   // PUT the object
	ActionApply     = "apply"     // PATCH application/apply-patch+yaml
	ActionJSONPatch = "json"      // PATCH application/json-patch+json
	ActionMerge     = "merge"     // PATCH application/merge-patch+json
	ActionStrategic = "strategic" // PATCH application/strategic-merge-patch+json
)

var patchTypes = map[string]string{
	ActionApply:     "application/apply-patch+yaml",
	ActionJSONPatch: "application/json-patch+json",
	ActionMerge:     "application/merge-patch+json",
	ActionStrategic: "application/strategic-merge-patch+json",
}

// defaultManager is the field manager the editor's writes use unless told.
const defaultManager = "kubeplay-ui"

// Handler serves the editor: GET shows the form (with an object loaded when
// r, ns and name are given), POST sends the write and shows the answer.
type Handler struct {
	api *inproc.Client
}

// New returns the editor over api.
func New(api http.Handler) *Handler {
	return &Handler{api: inproc.New(api, "kubeplay-ui")}
}

// Form is what the editor sends.
type Form struct {
	Action          string
	YAML            string
	Ref             string // the target of patches: type, namespace, name
	Namespace       string
	Name            string
	DryRun          bool
	FieldManager    string
	Force           bool
	FieldValidation string // "", Ignore, Warn, Strict
}

func formFrom(v url.Values) Form {
	f := Form{
		Action: v.Get("action"), YAML: v.Get("yaml"),
		Ref: strings.TrimSpace(v.Get("r")), Namespace: strings.TrimSpace(v.Get("ns")), Name: strings.TrimSpace(v.Get("name")),
		DryRun: v.Get("dryRun") != "", FieldManager: strings.TrimSpace(v.Get("fieldManager")), Force: v.Get("force") != "",
		FieldValidation: v.Get("fieldValidation"),
	}
	if f.Action == "" {
		f.Action = ActionApply
	}
	return f
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p Props
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		p.Form = formFrom(r.URL.Query())
		if p.Form.FieldManager == "" {
			p.Form.FieldManager = defaultManager
		}
		if p.Form.Name != "" && p.Form.YAML == "" {
			p.Form.YAML, p.Error = h.load(r.Context(), p.Form)
		}
		if p.Form.YAML == "" {
			p.Form.YAML = template
		}
	case http.MethodPost:
		form, ok := layout.PostedForm(w, r)
		if !ok {
			return
		}
		p.Form = formFrom(form)
		p.Result, p.Error = h.send(r.Context(), p.Form)
		if p.Result != nil && len(p.Result.Conflicts) > 0 {
			p.Ways = h.waysOut(r.Context(), p.Form, p.Result)
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	layout.Write(w, r, http.StatusOK, Page(p))
}

const template = `apiVersion: v1
kind: ConfigMap
metadata:
  name: example
  namespace: default
data:
  greeting: hello
`

// load returns the object as YAML to edit, without managedFields (which
// an apply or a replace would otherwise send back).
func (h *Handler) load(ctx context.Context, f Form) (string, *status.Props) {
	t, err := apitypes.Lookup(ctx, h.api, f.Ref)
	if err == nil {
		err = apitypes.CheckObject(t, f.Namespace, f.Name)
	}
	var obj map[string]any
	if err == nil {
		err = h.api.Get(ctx, apitypes.ObjectPath(t, f.Namespace, f.Name), &obj)
	}
	if err != nil {
		return "", status.From(err)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return yamlview.Text(obj), nil
}

// target finds where f goes: for patches the form's type, namespace and
// name; otherwise the object's own apiVersion, kind, namespace and name.
func (h *Handler) target(ctx context.Context, f Form, obj map[string]any) (t apitypes.Type, ns, name string, err error) {
	if f.Action == ActionJSONPatch || f.Action == ActionMerge || f.Action == ActionStrategic {
		t, err = apitypes.Lookup(ctx, h.api, f.Ref)
		ns, name = f.Namespace, f.Name
	} else {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		t, err = apitypes.ForKind(ctx, h.api, apiVersion, kind)
		md, _ := obj["metadata"].(map[string]any)
		ns, _ = md["namespace"].(string)
		name, _ = md["name"].(string)
		if ns == "" {
			ns = f.Namespace
		}
		if ns == "" {
			ns = "default" // as kubectl, without a namespace in the manifest or the context
		}
	}
	if err != nil {
		return t, "", "", err
	}
	if !t.Namespaced {
		ns = ""
	}
	if f.Action == ActionCreate {
		if t.Namespaced && !apitypes.ValidNamespace(ns) {
			err = apierrors.NewBadRequest("invalid namespace " + strconv.Quote(ns))
		}
		return t, ns, name, err
	}
	return t, ns, name, apitypes.CheckObject(t, ns, name)
}

// send makes the request f describes and returns the API's answer.
func (h *Handler) send(ctx context.Context, f Form) (*ResultProps, *status.Props) {
	contentType, isPatch := patchTypes[f.Action]
	if !isPatch && f.Action != ActionCreate && f.Action != ActionReplace {
		return nil, &status.Props{Reason: "BadRequest", Code: http.StatusBadRequest, Message: "unknown action " + strconv.Quote(f.Action)}
	}
	body, err := yaml.YAMLToJSON([]byte(f.YAML))
	if err != nil {
		return nil, &status.Props{Message: "the YAML does not parse: " + err.Error()}
	}
	var obj map[string]any
	_ = json.Unmarshal(body, &obj) // a JSON patch is a list: no object, target from the form
	t, ns, name, err := h.target(ctx, f, obj)
	if err != nil {
		return nil, status.From(err)
	}
	method, path := http.MethodPatch, apitypes.ObjectPath(t, ns, name)
	switch f.Action {
	case ActionCreate:
		method, path, contentType = http.MethodPost, apitypes.ListPath(t, ns), "application/json"
	case ActionReplace:
		method, contentType = http.MethodPut, "application/json"
	}
	if f.Action == ActionApply {
		body = []byte(f.YAML) // sent as written: apply takes YAML
	}
	q := url.Values{}
	if f.DryRun {
		q.Set("dryRun", "All")
	}
	if f.FieldManager != "" {
		q.Set("fieldManager", f.FieldManager)
	}
	if f.Force && f.Action == ActionApply {
		q.Set("force", "true")
	}
	if f.FieldValidation != "" {
		q.Set("fieldValidation", f.FieldValidation)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := h.api.Raw(ctx, method, path, http.Header{"Content-Type": {contentType}, "Accept": {"application/json"}}, body)
	if err != nil {
		return nil, status.From(err)
	}
	res := &ResultProps{Method: method, Path: path, ContentType: contentType, Code: resp.Code,
		StatusText: http.StatusText(resp.Code), Warnings: resp.Header.Values("Warning")}
	var out any
	if json.Unmarshal(resp.Body, &out) == nil {
		res.Lines = yamlview.Lines(out, yamlview.ByIndex)
	} else {
		res.Raw = string(resp.Body)
	}
	var st metav1.Status
	if resp.Code == http.StatusConflict && json.Unmarshal(resp.Body, &st) == nil && st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == metav1.CauseType("FieldManagerConflict") {
				res.Conflicts = append(res.Conflicts, ConflictProps{Field: c.Field, Manager: managerOf(c.Message), Message: c.Message})
			}
		}
	}
	return res, nil
}

// managerOf reads the manager from a cause's message: conflict with "kubectl-label" using v1.
func managerOf(msg string) string {
	_, rest, ok := strings.Cut(msg, `"`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// waysOut prepares the three ways out of an apply conflict the Server-Side
// Apply documentation gives: force (take the fields over), drop the fields
// from the applied configuration (leave them to their owners), or adopt
// the live values (apply them too, and share the fields).
func (h *Handler) waysOut(ctx context.Context, f Form, res *ResultProps) []WayProps {
	forced := f
	forced.Force = true
	ways := []WayProps{{Kind: "force", Label: "Force: take the fields over", Form: forced}}

	var applied map[string]any
	if err := yaml.Unmarshal([]byte(f.YAML), &applied); err != nil {
		return ways
	}
	var live map[string]any
	if t, ns, name, err := h.target(ctx, f, applied); err == nil {
		_ = h.api.Get(ctx, apitypes.ObjectPath(t, ns, name), &live)
	}
	dropped, _ := copyJSON(applied)
	adopted, _ := copyJSON(applied)
	okDrop, okAdopt := true, live != nil
	for _, c := range res.Conflicts {
		p, err := parsePath(c.Field)
		if err != nil {
			okDrop, okAdopt = false, false
			break
		}
		okDrop = drop(dropped, p) && okDrop
		if v, found := get(live, p); found && okAdopt {
			okAdopt = set(adopted, p, v)
		} else {
			okAdopt = false
		}
	}
	add := func(ok bool, kind, label string, obj map[string]any) {
		if !ok {
			return
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return
		}
		g := f
		g.Force, g.YAML = false, string(b)
		ways = append(ways, WayProps{Kind: kind, Label: label, Form: g})
	}
	add(okDrop, "drop", "Drop the fields from your configuration", dropped)
	add(okAdopt, "adopt", "Adopt the live values (share the fields)", adopted)
	return ways
}

func copyJSON(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}
