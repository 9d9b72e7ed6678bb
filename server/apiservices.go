package server

import (
	"bytes"
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// apiServicesGVR is the resource of the APIServices kube-apiserver keeps,
// one per group version it serves (syncLocalAPIServices, syncCRDAPIServices).
var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// syncCRDAPIServices is the work of kube-apiserver's CRD registration
// controller on a CRD just established or removed: each of its group
// versions that custom resources serve has a local APIService, labelled
// as managed by that controller; one no longer served loses it.
func (s *registry) syncCRDAPIServices(ctx context.Context, crd object) error {
	res := s.catalog.Lookup(apiServicesGVR)
	if res == nil {
		return nil // apiregistration.k8s.io switched off
	}
	group := jsonmap.String(crd, "spec", "group")
	for _, v := range jsonmap.List(crd, "spec", "versions") {
		m, _ := v.(map[string]any)
		gv := schema.GroupVersion{Group: group, Version: str(m, "name")}
		name := apiServiceName(gv)
		obj, _, err := s.getObject(ctx, res, "", name)
		served := len(s.catalog.Resources(gv)) > 0
		switch {
		case apierrors.IsNotFound(err) && served:
			err = s.createBootstrap(ctx, res, objectKey(res, "", name), crdAPIService(gv))
		case err == nil && !served && jsonmap.String(obj, "metadata", "labels", automanagedLabel) == "true":
			_, _, err = s.deleteObject(ctx, newResourceStore(res), "", name, &metav1.DeleteOptions{})
		case apierrors.IsNotFound(err):
			err = nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// crdAPIService is the APIService kube-apiserver registers for a group
// version of custom resources, with the priorities it gives them all.
func crdAPIService(gv schema.GroupVersion) object {
	return object{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": apiServiceName(gv), "labels": map[string]any{automanagedLabel: "true"}},
		"spec":     map[string]any{"group": gv.Group, "version": gv.Version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(100)},
	}
}

// apiServicePriority ranks a group version in discovery: its group among
// the groups (an APIService's groupPriorityMinimum), and it among its
// group's versions (versionPriority).
type apiServicePriority struct{ group, version int64 }

// localAPIServicePriorities are the priorities kube-apiserver v1.35 gives
// the APIServices of the built-in group versions it serves (its table,
// where a group version of the generic control plane takes the value
// kube-apiserver's own entries give it); a group version that table no
// longer has takes the value of the last release that served it (those
// marked "until"). A group version missing here gets no APIService, as
// kube-apiserver registers none for one its table lacks:
// apiregistration.k8s.io is the aggregator's own.
var localAPIServicePriorities = map[schema.GroupVersion]apiServicePriority{
	{Version: "v1"}: {18000, 1},
	{Group: "extensions", Version: "v1beta1"}:                   {17900, 1}, // until v1.21
	{Group: "apps", Version: "v1"}:                              {17800, 15},
	{Group: "events.k8s.io", Version: "v1"}:                     {17750, 15},
	{Group: "events.k8s.io", Version: "v1beta1"}:                {17750, 5},
	{Group: "authentication.k8s.io", Version: "v1"}:             {17700, 15},
	{Group: "authorization.k8s.io", Version: "v1"}:              {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                       {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                       {17500, 30},
	{Group: "autoscaling", Version: "v2beta1"}:                  {17500, 9},
	{Group: "autoscaling", Version: "v2beta2"}:                  {17500, 1},
	{Group: "batch", Version: "v1"}:                             {17400, 15},
	{Group: "batch", Version: "v1beta1"}:                        {17400, 9},
	{Group: "certificates.k8s.io", Version: "v1"}:               {17300, 15},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:          {17300, 9},
	{Group: "networking.k8s.io", Version: "v1"}:                 {17200, 15},
	{Group: "networking.k8s.io", Version: "v1beta1"}:            {17200, 9},
	{Group: "policy", Version: "v1"}:                            {17100, 15},
	{Group: "policy", Version: "v1beta1"}:                       {17100, 9},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:         {17000, 15},
	{Group: "rbac.authorization.k8s.io", Version: "v1beta1"}:    {17000, 12}, // until v1.21
	{Group: "storage.k8s.io", Version: "v1"}:                    {16800, 15},
	{Group: "storage.k8s.io", Version: "v1beta1"}:               {16800, 9},
	{Group: "apiextensions.k8s.io", Version: "v1"}:              {16700, 15},
	{Group: "apiextensions.k8s.io", Version: "v1beta1"}:         {16700, 9}, // until v1.21
	{Group: "admissionregistration.k8s.io", Version: "v1"}:      {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}: {16700, 12},
	{Group: "scheduling.k8s.io", Version: "v1"}:                 {16600, 15},
	{Group: "scheduling.k8s.io", Version: "v1beta1"}:            {16600, 12}, // until v1.21
	{Group: "coordination.k8s.io", Version: "v1"}:               {16500, 15},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:          {16500, 13},
	{Group: "node.k8s.io", Version: "v1"}:                       {16300, 15},
	{Group: "node.k8s.io", Version: "v1beta1"}:                  {16300, 9},
	{Group: "discovery.k8s.io", Version: "v1"}:                  {16200, 15},
	{Group: "discovery.k8s.io", Version: "v1beta1"}:             {16200, 12},
	{Group: "resource.k8s.io", Version: "v1"}:                   {16200, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}:      {16100, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"}: {16100, 18},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2"}: {16100, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1"}: {16100, 12},
}

// localAPIServices returns the APIServices kube-apiserver registers at
// start for the built-in group versions of resources, sorted by name, as
// it writes them less their Available condition.
func localAPIServices(resources []catalog.Resource) []object {
	seen := map[schema.GroupVersion]bool{}
	var out []object
	for _, r := range resources {
		gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
		p, ok := localAPIServicePriorities[gv]
		if !ok || seen[gv] {
			continue
		}
		seen[gv] = true
		spec := map[string]any{"version": gv.Version, "groupPriorityMinimum": p.group, "versionPriority": p.version}
		if gv.Group != "" {
			spec["group"] = gv.Group
		}
		out = append(out, object{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": apiServiceName(gv), "labels": map[string]any{automanagedLabel: "onstart"}},
			"spec":     spec,
		})
	}
	slices.SortFunc(out, func(a, b object) int { return strings.Compare(str(metadata(a), "name"), str(metadata(b), "name")) })
	return out
}

// automanagedLabel marks the APIServices kube-apiserver keeps itself:
// "onstart" those of its built-in group versions, "true" those of CRDs.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// apiServiceName is the name of the APIService of a group version.
func apiServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// syncLocalAPIServices is the work of kube-apiserver's autoregister
// controller when it starts: each of want, the local APIServices of the
// group versions served now, exists with its spec (a changed one is put
// back), and one registered at an earlier start (labelled onstart) whose
// group version is no longer served is deleted; APIServices without the
// label are left alone. kubeplay does it when it opens a store and when
// the release, feature gates or runtime configuration change, which is
// kube-apiserver restarted with other flags.
func (s *registry) syncLocalAPIServices(ctx context.Context, want []object) error {
	res := s.catalog.Lookup(apiServicesGVR)
	if res == nil {
		return nil // apiregistration.k8s.io switched off
	}
	rs := newResourceStore(res)
	list, err := s.store.List(ctx, rs.collection(""), "", 0, 0)
	if err != nil {
		return storeError(res, "", err)
	}
	type stored struct {
		obj object
		kv  store.KeyValue
	}
	live := map[string]stored{}
	for _, kv := range list.Items {
		obj, err := rs.decode(kv)
		if err != nil {
			return err
		}
		live[str(metadata(obj), "name")] = stored{obj, kv}
	}
	wanted := map[string]bool{}
	for _, w := range want {
		name := str(metadata(w), "name")
		wanted[name] = true
		cur, ok := live[name]
		switch {
		case !ok:
			err = s.createBootstrap(ctx, res, rs.key("", name), deepCopyObject(w))
		case jsonmap.String(cur.obj, "metadata", "labels", automanagedLabel) != "" && !encodeAlike(cur.obj["spec"], w["spec"]):
			err = s.putBackAPIServiceSpec(ctx, rs, cur.obj, cur.kv, w["spec"])
		}
		if err != nil {
			return err
		}
	}
	for name, cur := range live {
		if wanted[name] || jsonmap.String(cur.obj, "metadata", "labels", automanagedLabel) != "onstart" {
			continue
		}
		uid := types.UID(str(metadata(cur.obj), "uid"))
		_, _, err := s.deleteObject(ctx, rs, "", name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// encodeAlike reports whether a and b encode to the same JSON: a decoded
// object holds its numbers as json.Numbers, one built here as ints.
func encodeAlike(a, b any) bool {
	ja, errA := encoding.Marshal(a)
	jb, errB := encoding.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// putBackAPIServiceSpec updates a local APIService whose spec was changed
// back to the one kube-apiserver gives it, as kube-apiserver writes it.
func (s *registry) putBackAPIServiceSpec(ctx context.Context, rs *resourceStore, live object, kv store.KeyValue, spec any) error {
	obj := deepCopyObject(live)
	obj["spec"] = deepCopyObject(spec.(map[string]any))
	rs.prepareForUpdate("", obj, live)
	obj, err := s.trackUpdate(rs, "", live, obj, "kube-apiserver")
	if err != nil {
		return err
	}
	_, err = s.commitUpdate(ctx, rs, "", str(metadata(live), "name"), obj, kv, false)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // changed meanwhile: the next start sees to it
	}
	return err
}
