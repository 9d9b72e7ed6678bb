package server

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/celeval"
	"kubeplay/server/openapi"
	"kubeplay/server/structural"
	"kubeplay/store"
)

// CustomResourceDefinitions are served by the server itself: kube-apiserver
// runs the apiextensions controllers (names, establishing, finalizer) in its
// own process, so kubeplay runs their work in the write path of the CRD
// (see establish and cleanupCRD), synchronously, each as a separate write.

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdCleanupFinalizer holds a CRD being deleted until its objects are gone.
const crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

func isCRDs(r *catalog.Resource) bool {
	return r.Group == crdsGVR.Group && r.Resource == crdsGVR.Resource
}

// defaultCRD fills in what kube-apiserver defaults in a CRD: the list kind,
// the singular name, the conversion strategy, and the status of a new one.
func defaultCRD(obj object, creating bool) {
	spec := mapAt(obj, "spec")
	names := mapAt(spec, "names")
	if kind := str(names, "kind"); kind != "" {
		if str(names, "listKind") == "" {
			names["listKind"] = kind + "List"
		}
		if str(names, "singular") == "" {
			names["singular"] = strings.ToLower(kind)
		}
	}
	if _, ok := spec["conversion"]; !ok {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	if creating {
		var stored []any
		for _, v := range versionsOf(spec) {
			if b, _ := v["storage"].(bool); b {
				stored = append(stored, str(v, "name"))
			}
		}
		obj["status"] = map[string]any{
			"acceptedNames":  map[string]any{"plural": "", "kind": ""},
			"conditions":     nil,
			"storedVersions": stored,
		}
	}
}

// mapAt returns the object at m[key], creating it if absent.
func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

func versionsOf(spec map[string]any) []map[string]any {
	list, _ := spec["versions"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// customResources returns the resources a CRD serves: one per served
// version once the CRD is Established (and still while it is deleted, until
// its objects are gone).
func customResources(crd object) []catalog.Resource {
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	st, _ := crd["status"].(map[string]any)
	if !established(st) {
		return nil
	}
	storageVersion := ""
	var storageSchema *structural.Schema
	keepUnknown, _ := spec["preserveUnknownFields"].(bool)
	for _, v := range versionsOf(spec) {
		if b, _ := v["storage"].(bool); b {
			storageVersion = str(v, "name")
			storageSchema, _ = versionSchema(v, keepUnknown)
		}
	}
	if storageSchema == nil {
		return nil // validated when written; a corrupt stored CRD is not served
	}
	var out []catalog.Resource
	for _, v := range versionsOf(spec) {
		if b, _ := v["served"].(bool); !b {
			continue
		}
		parsed, raw := versionSchema(v, keepUnknown)
		if parsed == nil {
			continue // validated when written; a corrupt stored CRD is not served
		}
		custom := &catalog.Custom{PreserveUnknownFields: keepUnknown, Rules: celeval.NewRules(parsed), Terminating: deleting(crd), CRD: str(metadata(crd), "name"), StorageVersion: storageVersion, StorageSchema: storageSchema, ListKind: str(names, "listKind"), Schema: parsed, RawSchema: raw}
		for _, c := range listOf(v, "additionalPrinterColumns") {
			m, _ := c.(map[string]any)
			custom.Columns = append(custom.Columns, catalog.PrinterColumn{
				Name: str(m, "name"), Type: str(m, "type"), Format: str(m, "format"),
				Description: str(m, "description"), JSONPath: str(m, "jsonPath"), Priority: int32(int64Of(m["priority"])),
			})
		}
		for _, f := range listOf(v, "selectableFields") {
			m, _ := f.(map[string]any)
			custom.SelectableFields = append(custom.SelectableFields, strings.TrimPrefix(str(m, "jsonPath"), "."))
		}
		r := catalog.Resource{
			Group: str(spec, "group"), Version: str(v, "name"), Kind: str(names, "kind"),
			Resource: str(names, "plural"), Singular: str(names, "singular"),
			Namespaced: str(spec, "scope") == "Namespaced",
			Verbs:      []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
			ShortNames: stringsOf(listOf(names, "shortNames")), Categories: stringsOf(listOf(names, "categories")),
			Custom: custom,
		}
		subs, _ := v["subresources"].(map[string]any)
		if _, ok := subs["status"]; ok {
			r.Subresources = append(r.Subresources, catalog.Subresource{Name: "status", Group: r.Group, Version: r.Version, Kind: r.Kind, Verbs: []string{"get", "patch", "update"}})
		}
		if sc, ok := subs["scale"].(map[string]any); ok {
			custom.Scale = &catalog.Scale{SpecReplicasPath: str(sc, "specReplicasPath"), StatusReplicasPath: str(sc, "statusReplicasPath"), LabelSelectorPath: str(sc, "labelSelectorPath")}
			r.Subresources = append(r.Subresources, catalog.Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}})
		}
		out = append(out, r)
	}
	return out
}

// versionSchema returns a CRD version's schema, parsed (nil if invalid),
// and the schema it publishes. A version without one (only v1beta1 allows
// it) takes any object; keepUnknown (v1beta1's spec.preserveUnknownFields)
// keeps what the schema does not know, and allows a non-structural schema.
// Neither publishes its fields, as kube-apiserver publishes only an object.
func versionSchema(v map[string]any, keepUnknown bool) (*structural.Schema, map[string]any) {
	anyObject := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	raw := rawSchema(v)
	if raw == nil {
		return &structural.Schema{Type: "object", PreserveUnknownFields: true}, anyObject
	}
	if !keepUnknown {
		parsed, _ := structural.Parse(raw, field.NewPath("schema"))
		return parsed, raw
	}
	parsed, violations, errs := structural.ParseNonStructural(raw, field.NewPath("schema"))
	if len(errs) > 0 {
		return nil, raw
	}
	parsed.KeepUnknownFields()
	if len(violations) > 0 {
		return parsed, anyObject
	}
	return parsed, raw
}

// nonStructuralCondition is kube-apiserver's NonStructuralSchema condition
// of a CRD that keeps unknown fields or has a non-structural schema (only
// v1beta1 allows either), nil for others.
func nonStructuralCondition(spec map[string]any, now string) map[string]any {
	var violations field.ErrorList
	if b, _ := spec["preserveUnknownFields"].(bool); b {
		violations = append(violations, field.Invalid(field.NewPath("spec", "preserveUnknownFields"), true, "must be false"))
	}
	for i, v := range versionsOf(spec) {
		if raw := rawSchema(v); raw != nil {
			_, vs, _ := structural.ParseNonStructural(raw, field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"))
			violations = append(violations, vs...)
		}
	}
	if len(violations) == 0 {
		return nil
	}
	return condition("NonStructuralSchema", "True", "Violations", violations.ToAggregate().Error(), now)
}

func stringsOf(list []any) []string {
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func established(st map[string]any) bool {
	for _, c := range listOf(st, "conditions") {
		m, _ := c.(map[string]any)
		if str(m, "type") == "Established" && str(m, "status") == "True" {
			return true
		}
	}
	return false
}

// establish is the work of kube-apiserver's naming and establishing
// controllers on a CRD just written: it accepts the names unless another
// CRD of the group uses one of them, records the conditions in the status
// (as the manager kube-apiserver, through /status), and serves the
// resource.
func (s *Server) establish(ctx context.Context, crd object) error {
	res := catalog.LookupBuiltin(crdsGVR)
	name := str(metadata(crd), "name")
	old := deepCopyObject(crd)
	accepted, reason, message, err := s.acceptNames(ctx, res, crd)
	if err != nil {
		return err
	}
	st := mapAt(crd, "status")
	now := formatTime(s.now())
	st["acceptedNames"] = accepted
	var conds []any
	if reason == "" {
		conds = append(conds, condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now))
		conds = append(conds, condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now))
	} else {
		conds = append(conds, condition("NamesAccepted", "False", reason, message, now))
		conds = append(conds, condition("Established", "False", "NotAccepted", "not all names are accepted", now))
	}
	if c := nonStructuralCondition(mapAt(crd, "spec"), now); c != nil {
		conds = append(conds, c)
	}
	for _, c := range listOf(st, "conditions") {
		m, _ := c.(map[string]any)
		for _, n := range conds {
			nm := n.(map[string]any)
			if str(m, "type") == str(nm, "type") && str(m, "status") == str(nm, "status") {
				nm["lastTransitionTime"] = m["lastTransitionTime"]
			}
		}
	}
	st["conditions"] = conds
	if reflect.DeepEqual(old["status"], crd["status"]) {
		s.setCustom(name, customResources(crd))
		return nil
	}
	out, err := s.trackUpdate(res, "status", old, crd, "kube-apiserver")
	if err != nil {
		return err
	}
	kv, err := s.store.Get(ctx, objectKey(res, "", name), 0)
	if err != nil {
		return storeError(res, name, err)
	}
	if out, err = s.commitUpdate(ctx, res, "", name, out, kv, false); err != nil {
		return err
	}
	s.setCustom(name, customResources(out))
	return nil
}

func condition(typ, status, reason, message, now string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
}

// acceptNames is kube-apiserver's naming controller's decision on a CRD's
// names: each is accepted unless another CRD of the group already took it
// (a conflicting name keeps its previously accepted value). It returns the
// accepted names, and the reason and message of the first conflict ("" if
// none), checked in the order plural, singular, short names, kind, list
// kind.
func (s *Server) acceptNames(ctx context.Context, res *catalog.Resource, crd object) (map[string]any, string, string, error) {
	name := str(metadata(crd), "name")
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	st, _ := crd["status"].(map[string]any)
	previous, _ := st["acceptedNames"].(map[string]any)
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return nil, "", "", storeError(res, name, err)
	}
	var resources, kinds []string // taken by the group's other CRDs
	for _, kv := range list.Items {
		other, err := decodeStored(res, kv)
		if err != nil || str(metadata(other), "name") == name {
			continue
		}
		if ospec, _ := other["spec"].(map[string]any); str(ospec, "group") != str(spec, "group") {
			continue
		}
		ost, _ := other["status"].(map[string]any)
		taken, _ := ost["acceptedNames"].(map[string]any)
		resources = append(resources, str(taken, "plural"), str(taken, "singular"))
		resources = append(resources, stringsOf(listOf(taken, "shortNames"))...)
		kinds = append(kinds, str(taken, "kind"), str(taken, "listKind"))
	}
	accepted := structural.DeepCopy(names).(map[string]any)
	reason, message := "", ""
	conflict := func(key, why, value string) {
		if prev, ok := previous[key]; ok && prev != "" {
			accepted[key] = prev
		} else {
			delete(accepted, key)
		}
		if reason == "" {
			reason, message = why, fmt.Sprintf("%q is already in use", value)
		}
	}
	for _, k := range []struct{ key, reason string }{{"plural", "PluralConflict"}, {"singular", "SingularConflict"}} {
		if v := str(names, k.key); v != "" && slices.Contains(resources, v) {
			conflict(k.key, k.reason, v)
		}
	}
	for _, v := range stringsOf(listOf(names, "shortNames")) {
		if slices.Contains(resources, v) {
			conflict("shortNames", "ShortNamesConflict", v)
			break
		}
	}
	for _, k := range []struct{ key, reason string }{{"kind", "KindConflict"}, {"listKind", "ListKindConflict"}} {
		if v := str(names, k.key); v != "" && slices.Contains(kinds, v) {
			conflict(k.key, k.reason, v)
		}
	}
	return accepted, reason, message, nil
}

// loadCRDs serves the resources of the CRDs already stored (a sandbox
// opened again).
func (s *Server) loadCRDs(ctx context.Context) error {
	res := catalog.LookupBuiltin(crdsGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return err
	}
	for _, kv := range list.Items {
		if crd, err := decodeStored(res, kv); err == nil {
			s.setCustom(str(metadata(crd), "name"), customResources(crd))
		}
	}
	return nil
}

// cleanupCRD is the work of kube-apiserver's CRD finalizer controller on
// a deleted CRD: it deletes the CRD's objects and, once none remains (those
// with finalizers wait for them; see customStrategy's afterWrite), stops serving the
// resource and removes its finalizer, which deletes the CRD.
func (s *Server) cleanupCRD(ctx context.Context, name string) error {
	res := catalog.LookupBuiltin(crdsGVR)
	crd, kv, err := s.getObject(ctx, res, "", name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !deleting(crd) || !slices.Contains(finalizers(crd), crdCleanupFinalizer) {
		return nil
	}
	if custom := s.customResource(name); custom != nil {
		prefix := collectionPrefix(custom, "")
		list, err := s.store.List(ctx, prefix, "", 0, 0)
		if err != nil {
			return err
		}
		for _, item := range list.Items {
			obj, err := decodeStored(custom, item)
			if err != nil || deleting(obj) {
				continue // waiting for its finalizers
			}
			md := metadata(obj)
			_, _, err = s.deleteObject(withoutWarnings(ctx), custom, str(md, "namespace"), str(md, "name"), &metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		if left, err := s.store.Count(ctx, prefix); err != nil || left > 0 {
			if err != nil {
				return err
			}
			return s.terminatingCondition(ctx, crd, kv, "InstanceDeletionInProgress", "CustomResource deletion is in progress")
		}
	}
	s.setCustom(name, nil)
	setFinalizers(crd, slices.DeleteFunc(finalizers(crd), func(f string) bool { return f == crdCleanupFinalizer }))
	_, err = s.commitUpdate(ctx, res, "", name, crd, kv, false)
	return err
}

// terminatingCondition sets the reason and message of a deleted CRD's
// Terminating condition, if they changed.
func (s *Server) terminatingCondition(ctx context.Context, crd object, live store.KeyValue, reason, message string) error {
	old := deepCopyObject(crd)
	for _, c := range listOf(mapAt(crd, "status"), "conditions") {
		m, _ := c.(map[string]any)
		if str(m, "type") == "Terminating" && (str(m, "reason") != reason || str(m, "message") != message) {
			m["reason"], m["message"] = reason, message
			res := catalog.LookupBuiltin(crdsGVR)
			out, err := s.trackUpdate(res, "status", old, crd, "kube-apiserver")
			if err != nil {
				return err
			}
			_, err = s.commitUpdate(ctx, res, "", str(metadata(crd), "name"), out, live, false)
			return err
		}
	}
	return nil
}

// customResource returns a resource the CRD named crd serves, or nil.
func (s *Server) customResource(crd string) *catalog.Resource {
	for _, r := range s.catalog.All() {
		if r.Custom != nil && r.Custom.CRD == crd {
			return r
		}
	}
	return nil
}

func deepCopyObject(obj object) object { return structural.DeepCopy(obj).(map[string]any) }

// setCustom serves the resources of the CRD named crd (none to stop), in
// the catalog and in the OpenAPI documents of their group versions.
func (s *Server) setCustom(crd string, resources []catalog.Resource) {
	gvs := map[schema.GroupVersion]bool{}
	for _, r := range s.catalog.All() {
		if r.Custom != nil && r.Custom.CRD == crd {
			gvs[r.GroupVersionResource().GroupVersion()] = true
			// The resources are replaced: their field managers go.
			if tc, ok := s.customTypes.LoadAndDelete(r.Custom); ok {
				s.fields.Forget(tc.(managedfields.TypeConverter))
			}
		}
	}
	for _, r := range resources {
		gvs[r.GroupVersionResource().GroupVersion()] = true
	}
	s.catalog.SetCustom(crd, resources)
	for gv := range gvs {
		var types []openapi.CustomType
		for _, r := range s.catalog.Resources(gv) {
			if r.Custom != nil {
				types = append(types, customType(r))
			}
		}
		path := "apis/" + gv.Group + "/" + gv.Version
		if len(types) == 0 {
			s.openapi.SetCustom(path, nil)
			continue
		}
		doc, err := openapi.CustomDocument(types)
		if err != nil {
			doc = nil // the embedded meta schemas are broken: a programming error
		}
		s.openapi.SetCustom(path, doc)
	}
	var all []openapi.CustomType
	for _, r := range s.catalog.All() {
		if r.Custom != nil {
			all = append(all, customType(r))
		}
	}
	s.openapi.SetCustomV2(all)
}

func customType(r *catalog.Resource) openapi.CustomType {
	return openapi.CustomType{
		GVK: r.GroupVersionKind(), Plural: r.Resource, Namespaced: r.Namespaced, Schema: r.Custom.RawSchema,
		Status: hasStatus(r), Scale: r.Custom.Scale != nil, ListKindName: r.Custom.ListKind,
	}
}
