package celrules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/structural"
)

func compileSchema(t *testing.T, raw map[string]any) *Validator {
	t.Helper()
	s, errs := structural.Parse(raw, field.NewPath("schema"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	v, errs := Compile(s, field.NewPath("schema"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// TestValidate_Budget checks that once the rules have spent the budget of
// an object, the evaluation stops with kube-apiserver's error.
func TestValidate_Budget(t *testing.T) {
	v := compileSchema(t, map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string", "maxLength": int64(10), "x-kubernetes-validations": []any{
			map[string]any{"rule": "self.size() > 5"}, map[string]any{"rule": "self.size() > 6"},
		}},
	}})
	obj := map[string]any{"a": "abc"}
	if errs := v.Validate(obj, nil); len(errs) != 2 {
		t.Fatalf("with the full budget: %v", errs)
	}
	v.budget = 1
	errs := v.Validate(obj, nil)
	want := `a: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("out of budget: %v, want [%s]", errs, want)
	}
}
