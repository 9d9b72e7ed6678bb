package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/yaml"
)

// lastApplied is the annotation where client-side apply keeps what was
// applied last.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// object is one document of a -f file, with the resource it belongs to.
type object struct {
	r      resource
	ns     string
	name   string
	fields map[string]any
}

// objects reads the file's YAML or JSON documents (separated by "---").
func (c *Console) objects(ctx context.Context, f flags, file string) ([]object, error) {
	if f.filename == "" {
		return nil, usageError("must specify -f: write the manifest in the file box")
	}
	var out []object
	for _, doc := range strings.Split("\n"+file, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var fields map[string]any
		if err := yaml.Unmarshal([]byte(doc), &fields); err != nil {
			return nil, usageError("error parsing the file: " + err.Error())
		}
		if fields == nil {
			continue
		}
		apiVersion, _ := fields["apiVersion"].(string)
		kind, _ := fields["kind"].(string)
		if apiVersion == "" || kind == "" {
			return nil, usageError("error validating data: apiVersion or kind not set")
		}
		r, err := c.byKind(ctx, apiVersion, kind)
		if err != nil {
			return nil, err
		}
		o := object{r: r, fields: fields, name: nameOf(fields)}
		if r.Namespaced {
			meta, _ := fields["metadata"].(map[string]any)
			o.ns, _ = meta["namespace"].(string)
			if o.ns == "" {
				o.ns = f.ns()
			}
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, usageError("no objects passed to the command")
	}
	return out, nil
}

func (c *Console) create(ctx context.Context, f flags, args []string, file string, out io.Writer) error {
	if len(args) > 0 && f.filename == "" {
		return c.createGenerated(ctx, f, args, out)
	}
	objs, err := c.objects(ctx, f, file)
	if err != nil {
		return err
	}
	for _, o := range objs {
		body, _ := json.Marshal(o.fields)
		data, err := c.request(ctx, "POST", o.r.path(o.ns, "")+query("fieldManager", f.fieldManager), "application/json", body, "")
		if err != nil {
			return inFile(err, "creating", f)
		}
		fmt.Fprintf(out, "%s created\n", o.r.ref(nameFromAnswer(data, o.name)))
	}
	return nil
}

// inFile puts "error when <doing> <file>: " in front of an API error's
// message, as kubectl does for objects from a file.
func inFile(err error, doing string, f flags) error {
	var st *statusError
	if !errors.As(err, &st) {
		return err
	}
	e := *st
	e.Message = fmt.Sprintf("error when %s %q: %s", doing, f.source(), st.Message)
	return &e
}

// conflictAdvice follows a server-side apply conflict, as kubectl prints it.
const conflictAdvice = `
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`

func nameFromAnswer(data []byte, fallback string) string {
	var obj map[string]any
	if json.Unmarshal(data, &obj) == nil {
		if n := nameOf(obj); n != "" {
			return n
		}
	}
	return fallback
}

func (c *Console) apply(ctx context.Context, f flags, _ []string, file string, out io.Writer) error {
	objs, err := c.objects(ctx, f, file)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.name == "" {
			return usageError("error from the file: an applied object needs metadata.name")
		}
		var verb string
		if f.serverSide {
			verb, err = c.applyServerSide(ctx, f, o)
		} else {
			verb, err = c.applyClientSide(ctx, f, o)
		}
		var st *statusError
		if f.serverSide && errors.As(err, &st) && st.Code == http.StatusConflict {
			return usageError(st.Message + conflictAdvice)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", o.r.ref(o.name), verb)
	}
	return nil
}

func (c *Console) applyServerSide(ctx context.Context, f flags, o object) (string, error) {
	manager := f.fieldManager
	if manager == "" {
		manager = "kubectl"
	}
	body, _ := json.Marshal(o.fields)
	force := ""
	if f.force {
		force = "true"
	}
	_, err := c.request(ctx, "PATCH", o.r.path(o.ns, o.name)+query("fieldManager", manager, "force", force), "application/apply-patch+yaml", body, "")
	return "serverside-applied", err
}

// applyClientSide does what kubectl apply does without --server-side: create
// with the last-applied annotation, or patch what changed between the last
// applied configuration and the file, and the annotation. Emulated: the
// patch is a two-way JSON merge patch, where kubectl computes a three-way
// strategic merge patch that also reverts others' changes to the fields the
// file sets.
func (c *Console) applyClientSide(ctx context.Context, f flags, o object) (string, error) {
	manager := f.fieldManager
	if manager == "" {
		manager = "kubectl-client-side-apply"
	}
	applied, err := json.Marshal(o.fields)
	if err != nil {
		return "", err
	}
	live, err := c.request(ctx, "GET", o.r.path(o.ns, o.name), "", nil, "")
	var st *statusError
	if errors.As(err, &st) && st.Code == 404 {
		body, err := withAnnotation(o.fields, string(applied)+"\n")
		if err != nil {
			return "", err
		}
		_, err = c.request(ctx, "POST", o.r.path(o.ns, "")+query("fieldManager", manager), "application/json", body, "")
		return "created", err
	}
	if err != nil {
		return "", err
	}
	var liveObj map[string]any
	if err := json.Unmarshal(live, &liveObj); err != nil {
		return "", err
	}
	meta, _ := liveObj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	original, _ := ann[lastApplied].(string)
	if original == "" {
		original = "{}"
	}
	diff, err := jsonpatch.CreateMergePatch([]byte(original), applied)
	if err != nil {
		return "", err
	}
	var patch map[string]any
	if err := json.Unmarshal(diff, &patch); err != nil {
		return "", err
	}
	if len(patch) == 0 {
		return "unchanged", nil
	}
	body, err := withAnnotation(patch, string(applied)+"\n")
	if err != nil {
		return "", err
	}
	_, err = c.request(ctx, "PATCH", o.r.path(o.ns, o.name)+query("fieldManager", manager), "application/merge-patch+json", body, "")
	return "configured", err
}

// withAnnotation returns obj as JSON with the last-applied annotation set
// to value (obj itself is left alone).
func withAnnotation(obj map[string]any, value string) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	copied := map[string]any{}
	if err := json.Unmarshal(data, &copied); err != nil {
		return nil, err
	}
	meta, _ := copied["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		copied["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[lastApplied] = value
	return json.Marshal(copied)
}

func (c *Console) delete(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	policy := map[string]string{"background": "Background", "true": "Background", "foreground": "Foreground", "orphan": "Orphan", "false": "Orphan"}[f.cascade]
	if policy == "" {
		return usageError(fmt.Sprintf(`invalid cascade value (%s). Must be "background", "foreground", or "orphan"`, f.cascade))
	}
	r, names, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usageError("resource(s) were provided, but no name was specified")
	}
	body, _ := json.Marshal(map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy})
	for _, name := range names {
		if _, err := c.request(ctx, "DELETE", r.path(f.ns(), name), "application/json", body, ""); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %q deleted\n", strings.ToLower(r.Kind)+groupSuffix(r), name)
	}
	return nil
}

func groupSuffix(r resource) string {
	if r.Group == "" {
		return ""
	}
	return "." + r.Group
}

var patchTypes = map[string]string{
	"strategic": "application/strategic-merge-patch+json",
	"merge":     "application/merge-patch+json",
	"json":      "application/json-patch+json",
}

func (c *Console) patch(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	r, names, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	if len(names) != 1 || f.patch == "" {
		return usageError("patch TYPE NAME -p PATCH [--type strategic|merge|json]")
	}
	ct, ok := patchTypes[f.patchType]
	if !ok {
		return usageError(fmt.Sprintf("--type must be one of [json merge strategic], not %q", f.patchType))
	}
	body, err := yaml.YAMLToJSON([]byte(f.patch))
	if err != nil {
		return usageError("unable to parse the patch: " + err.Error())
	}
	return c.patchAndSay(ctx, r, f, names[0], ct, body, "patched", out)
}

// patchAndSay patches and prints "<ref> <verb>", or "(no change)" when the
// object's resourceVersion stayed, as kubectl does.
func (c *Console) patchAndSay(ctx context.Context, r resource, f flags, name, contentType string, body []byte, verb string, out io.Writer) error {
	before, err := c.request(ctx, "GET", r.path(f.ns(), name), "", nil, "")
	if err != nil {
		return err
	}
	after, err := c.request(ctx, "PATCH", r.path(f.ns(), name)+query("fieldManager", f.fieldManager), contentType, body, "")
	if err != nil {
		return err
	}
	if resourceVersion(before) == resourceVersion(after) {
		verb += " (no change)"
	}
	_, err = fmt.Fprintf(out, "%s %s\n", r.ref(name), verb)
	return err
}

func resourceVersion(data []byte) string {
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	json.Unmarshal(data, &obj)
	return obj.Metadata.ResourceVersion
}

func (c *Console) label(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	return c.setMeta(ctx, f, args, "labels", "labeled", out)
}

func (c *Console) annotate(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	return c.setMeta(ctx, f, args, "annotations", "annotated", out)
}

// setMeta is label and annotate: TYPE NAME key=value... key-... as a merge
// patch, refusing to change a value without --overwrite as kubectl does.
func (c *Console) setMeta(ctx context.Context, f flags, args []string, field, verb string, out io.Writer) error {
	r, rest, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	if len(rest) < 2 {
		return usageError(fmt.Sprintf("one or more resources and %s changes must be specified: TYPE NAME key=value key-", strings.TrimSuffix(field, "s")))
	}
	name, changes := rest[0], map[string]any{}
	for _, kv := range rest[1:] {
		if k, ok := strings.CutSuffix(kv, "-"); ok && !strings.Contains(kv, "=") {
			changes[k] = nil
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError(fmt.Sprintf("invalid %s format: %s", strings.TrimSuffix(field, "s"), kv))
		}
		changes[k] = v
	}
	if !f.overwrite {
		data, err := c.request(ctx, "GET", r.path(f.ns(), name), "", nil, "")
		if err != nil {
			return err
		}
		var obj struct {
			Metadata map[string]map[string]string `json:"metadata"`
		}
		json.Unmarshal(data, &obj)
		for k, v := range changes {
			if old, ok := obj.Metadata[field][k]; ok && v != nil && old != v {
				return usageError(fmt.Sprintf("'%s' already has a value (%s), and --overwrite is false", k, old))
			}
		}
	}
	if field == "labels" && !hasValue(changes) {
		verb = "unlabeled" // only removals, as kubectl says
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{field: changes}})
	return c.patchAndSay(ctx, r, f, name, "application/merge-patch+json", body, verb, out)
}

func hasValue(changes map[string]any) bool {
	for _, v := range changes {
		if v != nil {
			return true
		}
	}
	return false
}

func (c *Console) scale(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	r, names, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	if len(names) != 1 || !f.replicasSet {
		return usageError("scale TYPE NAME --replicas=COUNT")
	}
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": f.replicas}})
	path := r.path(f.ns(), names[0])
	note := ""
	if d, _ := c.discovery(ctx); d.hasScale[r.Group+"/"+r.Name] {
		path += "/scale"
	} else {
		note = " (this sandbox serves no scale subresource for it: spec.replicas patched)"
	}
	if _, err := c.request(ctx, "PATCH", path, "application/merge-patch+json", body, ""); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s scaled%s\n", r.ref(names[0]), note)
	return err
}
