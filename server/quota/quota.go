package quota

import (
	"fmt"
	"time"

	"kubeplay/internal/jsonmap"
)

// A Quota is what admission and the controller read of a ResourceQuota.
type Quota struct {
	Name string
	// Scopes are its spec.scopes (as Exists selectors), then its
	// spec.scopeSelector's expressions.
	Scopes []Selector
	// SpecHard is spec.hard; Hard and Used are its status, which admission
	// goes by.
	SpecHard, Hard, Used List
	// HasUsed says status.used is set (it may be empty).
	HasUsed bool
}

// Of reads the ResourceQuota q.
func Of(q jsonmap.Object) Quota {
	spec, status := jsonmap.Child(q, "spec"), jsonmap.Child(q, "status")
	out := Quota{Name: jsonmap.String(q, "metadata", "name"), SpecHard: ListOf(spec["hard"]),
		Hard: ListOf(status["hard"]), Used: ListOf(status["used"])}
	_, out.HasUsed = status["used"].(map[string]any)
	for _, s := range jsonmap.Strings(spec, "scopes") {
		out.Scopes = append(out.Scopes, Selector{Scope: s, Operator: "Exists"})
	}
	for _, e := range jsonmap.Items(jsonmap.Child(spec, "scopeSelector")["matchExpressions"]) {
		out.Scopes = append(out.Scopes, Selector{Scope: jsonmap.String(e, "scopeName"), Operator: jsonmap.String(e, "operator"), Values: jsonmap.Strings(e, "values")})
	}
	return out
}

// Applies reports whether q, by the resources of hard and its scopes,
// limits obj, of ev's resource.
func Applies(ev Evaluator, q Quota, hard List, obj jsonmap.Object) (bool, error) {
	if len(ev.Resources(hard.Names())) == 0 {
		return false, nil
	}
	for _, sel := range q.Scopes {
		if ok, err := ev.InScope(sel, obj); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Forbidden is why admission refuses a write: kube-apiserver answers it
// as a 403.
type Forbidden struct{ Message string }

func (f *Forbidden) Error() string { return f.Message }

func forbidden(format string, args ...any) error { return &Forbidden{fmt.Sprintf(format, args...)} }

// Charge is kube-apiserver's ResourceQuota admission of a write of obj
// (old nil for a create) through subresource, by ev, under the quotas of
// its namespace: it returns, by index in quotas, the status.used of each
// quota the write charges, or a *Forbidden that says why it exceeds one,
// or another error.
func Charge(quotas []Quota, ev Evaluator, subresource string, obj, old jsonmap.Object, now time.Time) (map[int]List, error) {
	var applying []int
	for i, q := range quotas {
		ok, err := Applies(ev, q, q.Hard, obj)
		if err != nil {
			return nil, fmt.Errorf("error matching scopes of quota %s, err: %v", q.Name, err)
		}
		if !ok {
			continue
		}
		restricted := ev.Resources(q.Hard.Names())
		if err := ev.Constraints(restricted, obj); err != nil {
			return nil, forbidden("failed quota: %s: %v", q.Name, err)
		}
		for _, r := range restricted {
			if _, ok := q.Used[r]; !ok {
				return nil, forbidden("status unknown for quota: %s, resources: %s", q.Name, prettyNames(restricted))
			}
		}
		applying = append(applying, i)
	}
	usage := ev.Usage(obj, now)
	if negative := Negative(usage); len(negative) > 0 {
		return nil, forbidden("quota usage is negative for resource(s): %s", prettyNames(negative))
	}
	deltas := map[int]List{}
	for _, i := range applying {
		deltas[i] = usage
	}
	// An update is charged what it adds, under the quotas that held the
	// object before too.
	if old != nil && jsonmap.String(old, "metadata", "resourceVersion") != "" {
		delta := SubtractNonNegative(usage, ev.Usage(old, now))
		for _, i := range applying {
			if ok, err := Applies(ev, quotas[i], quotas[i].Hard, old); err != nil {
				return nil, err
			} else if ok {
				deltas[i] = delta
			}
		}
	}
	charged := map[int]List{}
	for _, i := range applying {
		q := quotas[i]
		delta := RemoveZeros(deltas[i])
		if len(delta) == 0 {
			continue
		}
		requested := Mask(delta, q.Hard.Names())
		used := Add(q.Used, requested)
		if Equal(used, q.Used) {
			continue
		}
		if subresource != "status" {
			if ok, exceeded := Within(Mask(used, requested.Names()), q.Hard); !ok {
				return nil, forbidden("exceeded quota: %s, requested: %s, used: %s, limited: %s",
					q.Name, Mask(requested, exceeded), Mask(q.Used, exceeded), Mask(q.Hard, exceeded))
			}
		}
		charged[i] = used
	}
	return charged, nil
}
