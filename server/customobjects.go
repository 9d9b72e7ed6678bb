package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
