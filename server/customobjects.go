package server

import (
	"fmt"

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

// statusOnly is the object an update of the status subresource writes: the
// stored one with the new status (and the managedFields the field manager
// computed for the update, or the client sent), unless the resource's
// strategy says otherwise.
func statusOnly(res *catalog.Resource, obj, old object) object {
	if own := strategyOf(res).statusOnly; own != nil {
		return own(res, obj, old)
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
