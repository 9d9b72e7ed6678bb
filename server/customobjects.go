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
// computed for the update, or the client sent). HorizontalPodAutoscalers
// are the exception: kube-apiserver resets only their spec, so that their
// labels and annotations change with the status; and Deployments, whose
// annotations and finalizers change with it too, but not their labels
// (kube-controller-manager writes the revision annotation this way).
func statusOnly(res *catalog.Resource, obj, old object) object {
	if isHPA(res) {
		return hpaStatusOnly(res, obj, old)
	}
	if res.Group == "apps" && res.Resource == "deployments" {
		out, was := deepCopyObject(obj), deepCopyObject(old)
		out["spec"] = was["spec"]
		if labels, ok := metadata(was)["labels"]; ok {
			metadata(out)["labels"] = labels
		} else {
			delete(metadata(out), "labels")
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
