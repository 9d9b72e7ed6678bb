package server

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/apiextensions"
	"kubeplay/server/catalog"
	"kubeplay/server/openapi"
	"kubeplay/server/structural"
	"kubeplay/store"
)

// CustomResourceDefinitions are served by the server itself: kube-apiserver
// runs the apiextensions controllers (names, establishing, finalizer) in its
// own process, so kubeplay runs their work in the write path of the CRD
// (see establish and cleanupCRD), synchronously, each as a separate write.

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// establish is the work of kube-apiserver's naming and establishing
// controllers on a CRD just written: it accepts the names unless another
// CRD of the group uses one of them, records the conditions in the status
// (as the manager kube-apiserver, through /status), and serves the
// resource.
func (s *registry) establish(ctx context.Context, crd object) error {
	res := catalog.LookupBuiltin(crdsGVR)
	name := str(metadata(crd), "name")
	old := deepCopyObject(crd)
	accepted, reason, message, err := s.acceptNames(ctx, res, crd)
	if err != nil {
		return err
	}
	st := jsonmap.Ensure(crd, "status")
	now := formatTime(s.now())
	st["acceptedNames"] = accepted
	var conds []any
	if reason == "" {
		conds = append(conds, apiextensions.Condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now))
		conds = append(conds, apiextensions.Condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now))
	} else {
		conds = append(conds, apiextensions.Condition("NamesAccepted", "False", reason, message, now))
		conds = append(conds, apiextensions.Condition("Established", "False", "NotAccepted", "not all names are accepted", now))
	}
	if c := apiextensions.NonStructuralCondition(jsonmap.Ensure(crd, "spec"), now); c != nil {
		conds = append(conds, c)
	}
	for _, c := range jsonmap.List(st, "conditions") {
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
		s.setCustom(name, s.customResources(crd))
		return s.syncCRDAPIServices(ctx, crd)
	}
	rs := newResourceStore(res)
	out, err := s.trackUpdate(rs, "status", old, crd, "kube-apiserver")
	if err != nil {
		return err
	}
	kv, err := s.store.Get(ctx, rs.key("", name), 0)
	if err != nil {
		return storeError(res, name, err)
	}
	if out, err = s.commitUpdate(ctx, rs, "", name, out, kv, false); err != nil {
		return err
	}
	s.setCustom(name, s.customResources(out))
	return s.syncCRDAPIServices(ctx, out)
}

// acceptNames is kube-apiserver's naming controller's decision on a CRD's
// names: each is accepted unless another CRD of the group already took it
// (a conflicting name keeps its previously accepted value). It returns the
// accepted names, and the reason and message of the first conflict ("" if
// none), checked in the order plural, singular, short names, kind, list
// kind.
func (s *registry) acceptNames(ctx context.Context, res *catalog.Resource, crd object) (map[string]any, string, string, error) {
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
		resources = append(resources, jsonmap.Strings(taken, "shortNames")...)
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
	for _, v := range jsonmap.Strings(names, "shortNames") {
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
func (s *registry) loadCRDs(ctx context.Context) error {
	res := catalog.LookupBuiltin(crdsGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return err
	}
	for _, kv := range list.Items {
		if crd, err := decodeStored(res, kv); err == nil {
			s.setCustom(str(metadata(crd), "name"), s.customResources(crd))
		}
	}
	return nil
}

// cleanupCRD is the work of kube-apiserver's CRD finalizer controller on
// a deleted CRD: it deletes the CRD's objects and, once none remains (those
// with finalizers wait for them; see customStrategy's afterWrite), stops serving the
// resource and removes its finalizer, which deletes the CRD.
func (s *registry) cleanupCRD(ctx context.Context, name string) error {
	res := catalog.LookupBuiltin(crdsGVR)
	crd, kv, err := s.getObject(ctx, res, "", name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !deleting(crd) || !slices.Contains(finalizers(crd), apiextensions.CleanupFinalizer) {
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
			_, _, err = s.deleteObject(withoutWarnings(ctx), newResourceStore(custom), str(md, "namespace"), str(md, "name"), &metav1.DeleteOptions{})
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
	if err := s.syncCRDAPIServices(ctx, crd); err != nil {
		return err
	}
	setFinalizers(crd, slices.DeleteFunc(finalizers(crd), func(f string) bool { return f == apiextensions.CleanupFinalizer }))
	_, err = s.commitUpdate(ctx, newResourceStore(res), "", name, crd, kv, false)
	return err
}

// terminatingCondition sets the reason and message of a deleted CRD's
// Terminating condition, if they changed.
func (s *registry) terminatingCondition(ctx context.Context, crd object, live store.KeyValue, reason, message string) error {
	old := deepCopyObject(crd)
	for _, c := range jsonmap.List(jsonmap.Ensure(crd, "status"), "conditions") {
		m, _ := c.(map[string]any)
		if str(m, "type") == "Terminating" && (str(m, "reason") != reason || str(m, "message") != message) {
			m["reason"], m["message"] = reason, message
			rs := newResourceStore(catalog.LookupBuiltin(crdsGVR))
			out, err := s.trackUpdate(rs, "status", old, crd, "kube-apiserver")
			if err != nil {
				return err
			}
			_, err = s.commitUpdate(ctx, rs, "", str(metadata(crd), "name"), out, live, false)
			return err
		}
	}
	return nil
}

// customResource returns a resource the CRD named crd serves, or nil.
func (s *registry) customResource(crd string) *catalog.Resource {
	for _, r := range s.catalog.All() {
		if r.Custom != nil && r.Custom.CRD == crd {
			return r
		}
	}
	return nil
}

// setCustom serves the resources of the CRD named crd (none to stop), in
// the catalog and in the OpenAPI documents of their group versions.
func (s *registry) setCustom(crd string, resources []catalog.Resource) {
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
		Status: hasSubresource(r, "status"), Scale: r.Custom.Scale != nil, ListKindName: r.Custom.ListKind,
	}
}

// storedCRD returns a copy of a CRD of any version in v1, the version the
// CRD controllers read.
func storedCRD(res *catalog.Resource, obj object) object {
	return deepCopyObject(toStorage(res, obj))
}
