package celrules_test

import (
	"testing"

	"kubeplay/server/catalog"
	"kubeplay/server/celrules"
	"kubeplay/server/celtypes"
	"kubeplay/server/openapi"
)

// Every built-in resource's kind types object: its metadata and apiVersion are known
// fields, a misspelt field is not.
func TestTypeCheck_builtinKinds(t *testing.T) {
	exprs := celtypes.PolicyExpressions{Validations: []celtypes.ValidationExpressions{
		{Expression: "object.metadata.name != '' && object.apiVersion != '' && oldObject.metadata.labels.size() >= 0"},
		{Expression: "object.nosuchfield == 1"},
	}}
	for _, r := range catalog.Builtin(func(*catalog.Resource) bool { return true }) {
		gvk := r.GroupVersionKind()
		s, ok, err := openapi.Structural(gvk)
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", gvk, ok, err)
		}
		warnings, err := celrules.TypeCheck([]celtypes.CheckedType{{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Schema: s}}, nil, exprs)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		if len(warnings) != 1 || warnings[0].FieldRef != "spec.validations[1].expression" {
			t.Errorf("%v: warnings %v, want one on spec.validations[1].expression", gvk, warnings)
		}
	}
}
