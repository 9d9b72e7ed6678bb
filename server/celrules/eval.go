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
	return v.root.validate(obj, oldVal, old != nil, nil)
}

func (n *node) validate(v, old any, hasOld bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
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
			if unchanged && !r.transition {
				continue
			}
			errs = append(errs, r.evaluate(n, self, oldSelf, hasOld, v, path)...)
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
			errs = append(errs, child.validate(x[k], o, hasOld && ok, childPath)...)
		}
	case []any:
		if n.items == nil {
			break
		}
		oldList, _ := old.([]any)
		for i, e := range x {
			o, ok := structural.Correlate(n.schema, e, oldList)
			errs = append(errs, n.items.validate(e, o, hasOld && ok, path.Index(i))...)
		}
	}
	return errs
}

func (r *rule) evaluate(n *node, self, oldSelf any, hasOld bool, raw any, path *field.Path) field.ErrorList {
	if r.transition && !hasOld && !r.OptionalOldSelf {
		return nil
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
	out, _, err := r.program.Eval(vars)
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
		default:
			msg = fmt.Sprintf("%v evaluating rule: %s", err, what)
		}
		return field.ErrorList{field.Invalid(path, shownType(n.schema, raw), msg)}
	}
	if b, ok := out.(types.Bool); ok && bool(b) {
		return nil
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
		return field.ErrorList{field.Forbidden(errPath, msg)}
	case "FieldValueRequired":
		return field.ErrorList{field.Required(errPath, msg)}
	case "FieldValueDuplicate":
		return field.ErrorList{field.Duplicate(errPath, msg)}
	}
	var shown any = field.OmitValueType{}
	if _, composite := raw.(map[string]any); !composite {
		if _, list := raw.([]any); !list {
			shown = value(n.schema, raw, false)
		}
	}
	return field.ErrorList{field.Invalid(errPath, shown, msg)}
}

// shownType is what a runtime error shows as the value: its schema's type.
func shownType(s *structural.Schema, v any) string {
	if s.Type != "" {
		return s.Type
	}
	return structural.TypeName(v)
}
