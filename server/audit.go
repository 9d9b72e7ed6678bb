package server

import (
	"encoding/json"

	"kubeplay/server/audit"
)

// auditedFailure is a policy's failure under an Audit binding.
type auditedFailure struct {
	Message           string   `json:"message"`
	Policy            string   `json:"policy"`
	Binding           string   `json:"binding"`
	ValidationActions []string `json:"validationActions"`
}

// auditFailures records the failures of a request under Audit bindings,
// as kube-apiserver does: one annotation, the JSON list of them.
func auditFailures(rec *audit.Record, failures []auditedFailure) {
	if len(failures) == 0 {
		return
	}
	if b, err := json.Marshal(failures); err == nil {
		rec.Annotate("validation.policy.admission.k8s.io/validation_failure", string(b))
	}
}
