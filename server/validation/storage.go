package validation

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

var accessModes = []string{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}

// PersistentVolumeClaim checks a claim's spec: access modes, a storage
// request, the storage class's name and the volume mode.
func PersistentVolumeClaim(obj Object) field.ErrorList {
	return claimSpec(jsonmap.Child(obj, "spec"), specPath)
}

// claimSpec checks a claim's spec (a claim's, or a claim template's), at
// path.
func claimSpec(spec Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	list, _ := spec["accessModes"].([]any)
	if len(list) == 0 {
		errs = append(errs, field.Required(path.Child("accessModes"), "at least 1 access mode is required"))
	}
	for _, m := range list {
		if s, _ := m.(string); !slices.Contains(accessModes, s) {
			errs = append(errs, field.NotSupported(path.Child("accessModes"), s, accessModes))
		}
	}
	if _, ok := jsonmap.Child(jsonmap.Child(spec, "resources"), "requests")["storage"]; !ok {
		errs = append(errs, field.Required(path.Child("resources").Key("storage"), ""))
	}
	if class, _ := spec["storageClassName"].(string); class != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(class) {
			errs = append(errs, field.Invalid(path.Child("storageClassName"), class, msg))
		}
	}
	if mode, ok := spec["volumeMode"].(string); ok && mode != "Block" && mode != "Filesystem" {
		errs = append(errs, field.NotSupported(path.Child("volumeMode"), mode, []string{"Block", "Filesystem"}))
	}
	return errs
}

// PersistentVolumeClaimUpdate checks what a claim's update may change: its
// volume's name until bound, its storage request once bound, nothing else
// of its spec (the message shows the difference as kube-apiserver does,
// in its internal types).
func PersistentVolumeClaimUpdate(obj, old Object) field.ErrorList {
	spec, oldSpec := deepCopy(jsonmap.Child(obj, "spec")), deepCopy(jsonmap.Child(old, "spec"))
	if str(oldSpec, "volumeName") == "" {
		setOrDelete(oldSpec, "volumeName", spec)
	}
	if jsonmap.Child(obj, "status")["phase"] == "Bound" {
		if requests := jsonmap.Child(jsonmap.Child(spec, "resources"), "requests"); requests != nil {
			setOrDelete(requests, "storage", jsonmap.Child(jsonmap.Child(oldSpec, "resources"), "requests"))
		}
		setOrDelete(spec, "volumeAttributesClassName", oldSpec)
	}
	errs := PersistentVolumeClaim(obj)
	was, now := internalJSON("core.PersistentVolumeClaimSpec", oldSpec), internalJSON("core.PersistentVolumeClaimSpec", spec)
	if !bytes.Equal(was, now) {
		errs = append(errs, field.Forbidden(specPath, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"+diff.Diff(was, now)))
	}
	// A request may shrink back to what the volume has (recovering from a
	// failed expansion), not below.
	size := func(o Object, fields ...string) resource.Quantity {
		for _, f := range fields {
			o = jsonmap.Child(o, f)
		}
		q, _ := jsonmap.Quantity(o["storage"])
		return q
	}
	newSize := size(obj, "spec", "resources", "requests")
	if newSize.Cmp(size(old, "spec", "resources", "requests")) < 0 && newSize.Cmp(size(old, "status", "capacity")) <= 0 {
		errs = append(errs, field.Forbidden(specPath.Child("resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	newSpec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	if !reflect.DeepEqual(newSpec["volumeMode"], oldSpec["volumeMode"]) {
		// kube-apiserver names the field without its spec.
		errs = append(errs, field.Invalid(field.NewPath("volumeMode"), newSpec["volumeMode"], "field is immutable"))
	}
	return errs
}

// StorageClass checks a StorageClass: a provisioner, a reclaim policy and
// a volume binding mode it knows.
func StorageClass(obj Object) field.ErrorList {
	errs := provisionerName(obj, "provisioner")
	if policy, _ := obj["reclaimPolicy"].(string); policy != "" && policy != "Delete" && policy != "Retain" {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), policy, []string{"Delete", "Retain"}))
	}
	switch mode, ok := obj["volumeBindingMode"].(string); {
	case !ok:
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case mode != "Immediate" && mode != "WaitForFirstConsumer":
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), mode, []string{"Immediate", "WaitForFirstConsumer"}))
	}
	return errs
}

// provisionerName checks the name of the driver a class names in field k.
func provisionerName(obj Object, k string) field.ErrorList {
	name, _ := obj[k].(string)
	if name == "" {
		return field.ErrorList{field.Required(field.NewPath(k), "")}
	}
	var errs field.ErrorList
	// kube-apiserver lowercases it first.
	for _, msg := range utilvalidation.IsQualifiedName(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(field.NewPath(k), strings.ToLower(name), msg))
	}
	return errs
}

// StorageClassUpdate checks a StorageClass's update: the class as new, and
// its parameters, provisioner, reclaim policy and binding mode unchanged.
func StorageClassUpdate(obj, old Object) field.ErrorList {
	errs := StorageClass(obj)
	if !reflect.DeepEqual(emptyAsNil(obj["parameters"]), emptyAsNil(old["parameters"])) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	for _, k := range []string{"provisioner", "reclaimPolicy"} {
		if obj[k] != old[k] {
			errs = append(errs, field.Forbidden(field.NewPath(k), "updates to "+k+" are forbidden."))
		}
	}
	if obj["volumeBindingMode"] != old["volumeBindingMode"] {
		errs = append(errs, field.Invalid(field.NewPath("volumeBindingMode"), obj["volumeBindingMode"], "field is immutable"))
	}
	return errs
}

// persistentVolumeSources are the fields of a PersistentVolume's spec
// that name its volume.
var persistentVolumeSources = []string{
	"gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi", "cinder",
	"cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
	"photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi",
}

// PersistentVolume checks a PersistentVolume's spec: access modes, a
// storage capacity, a reclaim policy, one volume source.
func PersistentVolume(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	var errs field.ErrorList
	modes := strs(spec["accessModes"])
	if len(modes) == 0 {
		errs = append(errs, field.Required(specPath.Child("accessModes"), ""))
	}
	for _, m := range modes {
		if !slices.Contains(accessModes, m) {
			errs = append(errs, field.NotSupported(specPath.Child("accessModes"), m, accessModes))
		}
	}
	capacity, _ := spec["capacity"].(map[string]any)
	if len(capacity) == 0 {
		errs = append(errs, field.Required(specPath.Child("capacity"), ""))
	}
	if _, ok := capacity["storage"]; !ok || len(capacity) > 1 {
		errs = append(errs, field.NotSupported(specPath.Child("capacity"), spec["capacity"], []string{"storage"}))
	}
	if policy, ok := spec["persistentVolumeReclaimPolicy"].(string); ok && policy != "Delete" && policy != "Recycle" && policy != "Retain" {
		errs = append(errs, field.NotSupported(specPath.Child("persistentVolumeReclaimPolicy"), policy, []string{"Delete", "Recycle", "Retain"}))
	}
	sources := 0
	for _, k := range persistentVolumeSources {
		if _, ok := spec[k].(map[string]any); ok {
			sources++
		}
	}
	if sources == 0 {
		errs = append(errs, field.Required(specPath, "must specify a volume type"))
	}
	if hostPath, ok := spec["hostPath"].(map[string]any); ok && str(hostPath, "path") == "" {
		errs = append(errs, field.Required(specPath.Child("hostPath", "path"), ""))
	}
	return errs
}

// PersistentVolumeUpdate checks a PersistentVolume's update as
// kube-apiserver does: the volume as new twice, its source and volume mode
// unchanged (the message shows the source's difference in its internal
// type).
func PersistentVolumeUpdate(obj, old Object) field.ErrorList {
	errs := append(PersistentVolume(obj), PersistentVolume(obj)...)
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	was, now := internalJSON("core.PersistentVolumeSource", oldSpec), internalJSON("core.PersistentVolumeSource", spec)
	if !bytes.Equal(was, now) {
		errs = append(errs, field.Forbidden(specPath.Child("persistentvolumesource"), "spec.persistentvolumesource is immutable after creation\n"+diff.Diff(was, now)))
	}
	if !reflect.DeepEqual(spec["volumeMode"], oldSpec["volumeMode"]) {
		errs = append(errs, field.Invalid(field.NewPath("volumeMode"), spec["volumeMode"], "field is immutable"))
	}
	return errs
}

// CSIDriver checks a CSIDriver's spec: its fsGroupPolicy, its token
// requests (one per audience, for 10 minutes to 2^32 seconds) and its
// volume lifecycle modes.
func CSIDriver(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	path := specPath
	var errs field.ErrorList
	if policy, ok := spec["fsGroupPolicy"].(string); ok && !slices.Contains(fsGroupPolicies, policy) {
		errs = append(errs, field.NotSupported(path.Child("fsGroupPolicy"), policy, fsGroupPolicies))
	}
	audiences := uniqueNames{}
	for i, r := range jsonmap.Items(spec["tokenRequests"]) {
		at := path.Child("tokenRequests").Index(i)
		audience := str(r, "audience")
		if dup := audiences.add(at.Child("audience"), audience); dup != nil {
			errs = append(errs, dup...)
			continue
		}
		if r["expirationSeconds"] == nil {
			continue
		}
		switch n := intOf(r["expirationSeconds"]); {
		case n < 600:
			errs = append(errs, field.Invalid(at.Child("expirationSeconds"), n, "may not specify a duration less than 10 minutes"))
		case n > 1<<32:
			errs = append(errs, field.Invalid(at.Child("expirationSeconds"), n, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	for _, mode := range jsonmap.Strings(spec, "volumeLifecycleModes") {
		if mode != "Persistent" && mode != "Ephemeral" {
			errs = append(errs, field.NotSupported(path.Child("volumeLifecycleModes"), mode, []string{"Persistent", "Ephemeral"}))
		}
	}
	return errs
}

var fsGroupPolicies = []string{"File", "None", "ReadWriteOnceWithFSType"}

// CSIDriverUpdate checks a CSIDriver's update: its spec, whether it needs
// attaching and its volume lifecycle modes unchanged.
func CSIDriverUpdate(obj, old Object) field.ErrorList {
	errs := CSIDriver(obj)
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	if spec["attachRequired"] != oldSpec["attachRequired"] {
		// kube-apiserver names the field so.
		errs = append(errs, field.Invalid(specPath.Child("attachedRequired"), spec["attachRequired"], "field is immutable"))
	}
	if modes := jsonmap.Strings(spec, "volumeLifecycleModes"); !slices.Equal(modes, jsonmap.Strings(oldSpec, "volumeLifecycleModes")) {
		errs = append(errs, field.Invalid(specPath.Child("volumeLifecycleModes"), modes, "field is immutable"))
	}
	return errs
}

// VolumeAttributesClass checks a VolumeAttributesClass: a driver, and
// parameters.
func VolumeAttributesClass(obj Object) field.ErrorList {
	errs := provisionerName(obj, "driverName")
	params := jsonmap.Child(obj, "parameters")
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k == "" {
			errs = append(errs, field.Invalid(field.NewPath("parameters"), k, "field can not be empty."))
		}
	}
	if len(params) == 0 {
		errs = append(errs, field.Required(field.NewPath("parameters"), "must contain at least one key/value pair"))
	}
	return errs
}

// VolumeAttributesClassUpdate checks a VolumeAttributesClass's update: its
// driver and parameters unchanged, and the class as new.
func VolumeAttributesClassUpdate(obj, old Object) field.ErrorList {
	var errs field.ErrorList
	if obj["driverName"] != old["driverName"] {
		errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(emptyAsNil(obj["parameters"]), emptyAsNil(old["parameters"])) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(errs, VolumeAttributesClass(obj)...)
}

// CSINode checks a CSINode's drivers: a driver name each, once, a node ID,
// a count not negative, qualified topology keys.
func CSINode(obj Object) field.ErrorList {
	var errs field.ErrorList
	names := uniqueNames{}
	for i, d := range jsonmap.Items(jsonmap.Child(obj, "spec")["drivers"]) {
		path := specPath.Child("drivers").Index(i)
		name := str(d, "name")
		errs = append(errs, csiDriverName(name, path.Child("name"))...)
		switch id := str(d, "nodeID"); {
		case id == "":
			errs = append(errs, field.Required(path.Child("nodeID"), ""))
		case len(id) > 192:
			errs = append(errs, field.Invalid(path.Child("nodeID"), id, "must be 192 characters or less"))
		}
		if count, ok := jsonmap.IntOf(jsonmap.Child(d, "allocatable")["count"]); ok && count < 0 {
			errs = append(errs, field.Invalid(path.Child("allocatable", "count"), count, "must be greater than or equal to 0"))
		}
		errs = append(errs, names.add(path.Child("name"), name)...)
		keys := uniqueNames{}
		for _, k := range jsonmap.Strings(d, "topologyKeys") {
			if k == "" {
				errs = append(errs, field.Required(path, ""))
			}
			errs = append(errs, keys.add(path, k)...)
			for _, msg := range utilvalidation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(path, k, msg))
			}
		}
	}
	return errs
}

// CSINodeUpdate checks a CSINode's update: the node as new (twice, as
// kube-apiserver does), each driver it had unchanged but for its
// allocatable count.
func CSINodeUpdate(obj, old Object) field.ErrorList {
	errs := append(CSINode(obj), CSINode(obj)...)
	for _, was := range jsonmap.Items(jsonmap.Child(old, "spec")["drivers"]) {
		for _, d := range jsonmap.Items(jsonmap.Child(obj, "spec")["drivers"]) {
			if str(d, "name") != str(was, "name") {
				continue
			}
			now, before := maps.Clone(d), maps.Clone(was)
			delete(now, "allocatable")
			delete(before, "allocatable")
			if shown := internalJSON("storage.CSINodeDriver", now); !bytes.Equal(shown, internalJSON("storage.CSINodeDriver", before)) {
				errs = append(errs, field.Invalid(specPath.Child("drivers"), shown, "field is immutable"))
			}
		}
	}
	return errs
}

// csiDriverName checks the name of a CSI driver: a DNS subdomain in any
// case, at most 63 characters.
func csiDriverName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(path, "", 63))
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// VolumeAttachment checks a new VolumeAttachment: as volumeAttachment
// does, then the CSI driver name of its attacher and the name of its
// volume, which the v1 API checks of a new one.
func VolumeAttachment(obj Object) field.ErrorList {
	errs := volumeAttachment(obj)
	spec := jsonmap.Child(obj, "spec")
	errs = append(errs, csiDriverName(str(spec, "attacher"), field.NewPath("spec.attacher"))...)
	if pv, ok := jsonmap.Child(spec, "source")["persistentVolumeName"].(string); ok {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(pv) {
			errs = append(errs, field.Invalid(field.NewPath("spec.source.persistentVolumeName"), pv, msg))
		}
	}
	return errs
}

// volumeAttachment checks a VolumeAttachment: an attacher, one source, a
// node name.
func volumeAttachment(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	path := specPath
	var errs field.ErrorList
	attacher := str(spec, "attacher")
	if attacher == "" {
		errs = append(errs, field.Required(path.Child("attacher"), ""))
	}
	source := jsonmap.Child(spec, "source")
	pv, hasPV := source["persistentVolumeName"].(string)
	hasInline := source["inlineVolumeSpec"] != nil
	const one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case !hasPV && !hasInline:
		errs = append(errs, field.Required(path.Child("source"), one))
	case hasPV && hasInline:
		errs = append(errs, field.Forbidden(path.Child("source"), one))
	case hasPV && pv == "":
		errs = append(errs, field.Required(path.Child("source", "persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	node := str(spec, "nodeName")
	for _, msg := range utilvalidation.IsDNS1123Subdomain(node) {
		errs = append(errs, field.Invalid(path.Child("nodeName"), node, msg))
	}
	return errs
}

// VolumeAttachmentUpdate checks a VolumeAttachment's update: the
// attachment as new, its spec unchanged.
func VolumeAttachmentUpdate(obj, old Object) field.ErrorList {
	errs := volumeAttachment(obj)
	spec := internalJSON("storage.VolumeAttachmentSpec", jsonmap.Child(obj, "spec"))
	if !bytes.Equal(spec, internalJSON("storage.VolumeAttachmentSpec", jsonmap.Child(old, "spec"))) {
		errs = append(errs, field.Invalid(specPath, spec, "field is immutable"))
	}
	return errs
}

// CSIStorageCapacity checks a CSIStorageCapacity: a node topology
// selector, a storage class name, a capacity not negative.
func CSIStorageCapacity(obj Object) field.ErrorList {
	var errs field.ErrorList
	if ls, present := labelSelectorOf(obj["nodeTopology"]); present {
		errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))...)
	}
	class := str(obj, "storageClassName")
	for _, msg := range utilvalidation.IsDNS1123Subdomain(class) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), class, msg))
	}
	if q, ok := jsonmap.Quantity(obj["capacity"]); ok && q.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), "must be greater than or equal to 0"))
	}
	return errs
}

// CSIStorageCapacityUpdate checks a CSIStorageCapacity's update: the
// capacity as new, its node topology and storage class unchanged.
func CSIStorageCapacityUpdate(obj, old Object) field.ErrorList {
	errs := CSIStorageCapacity(obj)
	ls, _ := labelSelectorOf(obj["nodeTopology"])
	if was, _ := labelSelectorOf(old["nodeTopology"]); !reflect.DeepEqual(ls, was) {
		errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), ls, "field is immutable"))
	}
	if class := str(obj, "storageClassName"); class != str(old, "storageClassName") {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), class, "field is immutable"))
	}
	return errs
}
