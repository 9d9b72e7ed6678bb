package server

import (
	"context"
	"encoding/json"
)

// kube-apiserver writes the audit annotations of a request to its audit
// log; kubeplay has none, and hands them to whoever asked with
// WithAuditAnnotations (the playground's request journal).

type auditKey struct{}

// WithAuditAnnotations returns a context whose requests report their audit
// annotations to record, as admission adds them: a ValidatingAdmissionPolicy's
// auditAnnotations ("<policy>/<key>") and the failures of its Audit
// bindings ("validation.policy.admission.k8s.io/validation_failure").
func WithAuditAnnotations(ctx context.Context, record func(key, value string)) context.Context {
	return context.WithValue(ctx, auditKey{}, record)
}

func annotate(ctx context.Context, key, value string) {
	if record, ok := ctx.Value(auditKey{}).(func(key, value string)); ok {
		record(key, value)
	}
}

// auditedFailure is a policy's failure under an Audit binding.
type auditedFailure struct {
	Message           string   `json:"message"`
	Policy            string   `json:"policy"`
	Binding           string   `json:"binding"`
	ValidationActions []string `json:"validationActions"`
}

// auditFailures records the failures of a request under Audit bindings,
// as kube-apiserver does: one annotation, the JSON list of them.
func auditFailures(ctx context.Context, failures []auditedFailure) {
	if len(failures) == 0 {
		return
	}
	if b, err := json.Marshal(failures); err == nil {
		annotate(ctx, "validation.policy.admission.k8s.io/validation_failure", string(b))
	}
}
