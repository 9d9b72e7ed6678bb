package celrules

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/structural"
)

// Validate evaluates the rules on obj, a custom object; old is the object
// it replaces (nil on create), against which transition rules (those using
// oldSelf) are checked where the old object has a value at the same place.
func (v *Validator) Validate(obj, old map[string]any) field.ErrorList {
	if v == nil {
		return nil
	}
	var oldVal any
	if old != nil {
		oldVal = old
	}
	e := &evaluation{budget: v.budget}
	e.validate(v.root, obj, oldVal, old != nil, nil)
	return e.errs
}

// runtimeBudget is kube-apiserver's limit on the actual cost of all the
// rules evaluated on one object.
const runtimeBudget = 10000000

// evaluation is the evaluation of a schema's rules on one object. Once its
// budget is spent or a rule costs more than a call may, no further rule
// runs (stopped).
type evaluation struct {
	errs    field.ErrorList
	budget  int64
	stopped bool
}

func (e *evaluation) validate(n *node, v, old any, hasOld bool, path *field.Path) {
	// As kube-apiserver ratchets validation, the rules of a value unchanged
	// from before are not evaluated again, unless they compare it with it.
	unchanged := hasOld && reflect.DeepEqual(v, old)
	if len(n.rules) > 0 {
		self := value(n.schema, v, n.resource)
		var oldSelf any
		if hasOld {
			oldSelf = value(n.schema, old, n.resource)
		}
		for _, r := range n.rules {
			if e.stopped {
				return
			}
			if unchanged && !r.transition {
				continue
			}
			e.evaluate(r, n, self, oldSelf, hasOld, v, path)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			child, childPath := n.properties[k], path.Child(k)
			if n.schema.AdditionalProperties != nil {
				child, childPath = n.additional, path.Key(k)
			}
			if child == nil {
				continue
			}
			o, ok := oldMap[k]
			e.validate(child, x[k], o, hasOld && ok, childPath)
		}
	case []any:
		if n.items == nil {
			break
		}
		oldList, _ := old.([]any)
		for i, item := range x {
			o, ok := structural.Correlate(n.schema, item, oldList)
			e.validate(n.items, item, o, hasOld && ok, path.Index(i))
		}
	}
}

// evaluate runs one rule on a value of node n and records its error, if any.
func (e *evaluation) evaluate(r *rule, n *node, self, oldSelf any, hasOld bool, raw any, path *field.Path) {
	if r.transition && !hasOld && !r.OptionalOldSelf {
		return
	}
	vars := map[string]any{"self": self}
	switch {
	case r.OptionalOldSelf && hasOld:
		vars["oldSelf"] = types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(oldSelf))
	case r.OptionalOldSelf:
		vars["oldSelf"] = types.OptionalNone
	case hasOld:
		vars["oldSelf"] = oldSelf
	}
	errPath := path
	if r.FieldPath != "" {
		steps, _ := parseFieldPath(r.FieldPath)
		for _, st := range steps {
			if st.index >= 0 {
				errPath = errPath.Index(st.index)
			} else {
				errPath = errPath.Child(st.name)
			}
		}
	}
	out, details, err := r.program.Eval(vars)
	if err != nil {
		what := r.Rule.Rule
		if r.Message != "" {
			what = r.Message
		}
		var msg string
		switch {
		case strings.HasPrefix(err.Error(), "no such overload"):
			msg = fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %s", err, what)
		case strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
			msg = fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %s", err, what)
			e.stopped = true
		default:
			msg = fmt.Sprintf("%v evaluating rule: %s", err, what)
		}
		e.errs = append(e.errs, field.Invalid(path, shownType(n.schema, raw), msg))
		return
	}
	if cost := details.ActualCost(); cost != nil {
		if e.budget -= int64(*cost); e.budget < 0 {
			e.errs = append(e.errs, field.Invalid(path, shownType(n.schema, raw), "validation failed due to running out of cost budget, no further validation rules will be run"))
			e.stopped = true
			return
		}
	}
	if b, ok := out.(types.Bool); ok && bool(b) {
		return
	}
	msg := "failed rule: " + r.Rule.Rule
	if r.Message != "" {
		msg = r.Message
	}
	if r.message != nil {
		if m, _, err := r.message.Eval(vars); err == nil {
			if s, ok := m.(types.String); ok && s != "" {
				msg = string(s)
			}
		}
	}
	switch r.Reason {
	case "FieldValueForbidden":
		e.errs = append(e.errs, field.Forbidden(errPath, msg))
	case "FieldValueRequired":
		e.errs = append(e.errs, field.Required(errPath, msg))
	case "FieldValueDuplicate":
		e.errs = append(e.errs, field.Duplicate(errPath, msg))
	default:
		var shown any = field.OmitValueType{}
		switch raw.(type) {
		case map[string]any, []any:
		case string:
			shown = raw // as written, whatever its format
		default:
			shown = value(n.schema, raw, false)
		}
		e.errs = append(e.errs, field.Invalid(errPath, shown, msg))
	}
}

// shownType is what a runtime error shows as the value: its schema's type.
func shownType(s *structural.Schema, v any) string {
	if s.Type != "" {
		return s.Type
	}
	return structural.TypeName(v)
}
