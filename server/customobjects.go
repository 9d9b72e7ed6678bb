package server

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
)

// unknownFields are the reports of the unknown fields pruning found
// (`unknown field "spec.foo"`).
func unknownFields(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = fmt.Sprintf("unknown field %q", p)
	}
	return out
}

// blocking reports whether schema errors keep kube-apiserver from
// evaluating CEL rules: a value of the wrong type, a missing or unsupported
// one, or one too long or with too many items.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// statusOnly is the object an update of the status subresource writes, as
// the type's status strategy says: the new status, the stored spec (and
// whatever else is neither metadata nor status), and the new metadata but
// for what the strategy keeps as stored; or, for the types whose /status
// changes the status alone, the stored object with the new status (and
// the managedFields the field manager computed for the update, or the
// client sent). A strategy's own statusOnly replaces both.
func statusOnly(res *catalog.Resource, obj, old object) object {
	st := strategyOf(res)
	if st.statusOnly != nil {
		return st.statusOnly(res, obj, old)
	}
	if !st.statusOnlyStatus {
		out, was := deepCopyObject(obj), deepCopyObject(old)
		for k := range desiredState(out) {
			delete(out, k)
		}
		maps.Copy(out, desiredState(was))
		md, oldMD := metadata(out), metadata(was)
		for _, k := range st.statusIgnoresMetadata {
			if v, ok := oldMD[k]; ok {
				md[k] = v
			} else {
				delete(md, k)
			}
		}
		prepareForUpdate(res, "status", out, old)
		return out
	}
	out := deepCopyObject(old)
	if st, ok := obj["status"]; ok {
		out["status"] = st
	} else {
		delete(out, "status")
	}
	md := metadata(out)
	md["resourceVersion"] = metadata(obj)["resourceVersion"]
	if mf, ok := metadata(obj)["managedFields"]; ok {
		md["managedFields"] = mf
	} else {
		delete(md, "managedFields")
	}
	return out
}
