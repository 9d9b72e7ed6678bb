package audit

import (
	"context"
	"maps"
	"slices"
)

// Record is what the server found out about one request. Its zero value
// says nothing was learned (a request rejected before authentication).
type Record struct {
	// User is who the request ran as.
	User *User `json:"user,omitempty"`
	// ImpersonatedBy is who sent a request that impersonated User.
	ImpersonatedBy *User `json:"impersonatedBy,omitempty"`
	// Decision is the authorizer's: "allow" or "forbid" ("" before it
	// decided), and Reason its explanation, when it gave one.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Admission lists the admission stages the request passed through, in
	// the order they ran.
	Admission []Stage `json:"admission,omitempty"`
	// RefusedBy names the check outside admission that refused an
	// authorized request: "RBAC escalation check".
	RefusedBy string `json:"refusedBy,omitempty"`
	// Annotations are what admission noted for kube-apiserver's audit log:
	// a ValidatingAdmissionPolicy's auditAnnotations ("<policy>/<key>") and
	// the failures of its Audit bindings
	// ("validation.policy.admission.k8s.io/validation_failure").
	Annotations map[string]string `json:"annotations,omitempty"`
	// Revisions are the store revisions the request wrote, in order: how
	// an object's history finds the request behind each of its versions.
	Revisions []int64 `json:"revisions,omitempty"`
}

// User is a user's name and groups.
type User struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
}

// The two phases of admission: mutating plugins run first, then
// validating ones.
const (
	Mutating   = "mutating"
	Validating = "validating"
)

// Stage is one admission plugin acting on a request.
type Stage struct {
	Phase string `json:"phase"`
	// Plugin is kube-apiserver's name for the plugin: NamespaceLifecycle,
	// ServiceAccount, ValidatingAdmissionPolicy, ...
	Plugin string `json:"plugin"`
	// Policy and Binding name the ValidatingAdmissionPolicy and the binding
	// a ValidatingAdmissionPolicy stage evaluated (empty when no policy
	// applied to the request).
	Policy  string `json:"policy,omitempty"`
	Binding string `json:"binding,omitempty"`
	// Rejected says this stage rejected the request.
	Rejected bool `json:"rejected,omitempty"`
}

type recordKey struct{}

// NewContext returns ctx carrying r, for the server to fill in.
func NewContext(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// FromContext returns the record ctx carries, or nil when nobody records.
// A nil *Record's methods do nothing.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// Ran adds a stage that let the request through when err is nil and
// rejected it otherwise; it returns err.
func (r *Record) Ran(stage Stage, err error) error {
	if r != nil {
		stage.Rejected = err != nil
		r.Admission = append(r.Admission, stage)
	}
	return err
}

// Annotate sets an audit annotation.
func (r *Record) Annotate(key, value string) {
	if r == nil {
		return
	}
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	r.Annotations[key] = value
}

// Wrote notes that the request wrote store revision rev.
func (r *Record) Wrote(rev int64) {
	if r != nil {
		r.Revisions = append(r.Revisions, rev)
	}
}

// Copy returns a copy of r that later changes to r do not affect.
func (r *Record) Copy() Record {
	if r == nil {
		return Record{}
	}
	c := *r
	c.Admission = slices.Clone(r.Admission)
	c.Annotations = maps.Clone(r.Annotations)
	c.Revisions = slices.Clone(r.Revisions)
	return c
}
