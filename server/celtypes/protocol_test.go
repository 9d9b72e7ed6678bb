package celtypes_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
)

// Field errors that crossed to the engine as JSON read as they did.
func TestFieldErrors_roundTrip(t *testing.T) {
	reason := "FieldValueInvalid"
	path := field.NewPath("spec", "x-kubernetes-validations").Index(0)
	errs := field.ErrorList{
		field.Invalid(path.Child("rule"), celtypes.ValidationRule{Rule: "self.a > 1", Reason: &reason}, "compilation failed: ERROR: <input>:1:1"),
		field.Invalid(path, "a \"quoted\" string", "failed rule"),
		field.Invalid(path, int64(7), "too big"),
		field.Invalid(path, 1.5, "not whole"),
		field.Invalid(path, true, "not false"),
		field.Invalid(path, nil, "null"),
		field.Invalid(path, field.OmitValueType{}, "no value shown"),
		field.Invalid(path, map[string]any{"b": []any{1, "x"}}, "a map"),
		field.Forbidden(path.Child("rule"), "estimated rule cost exceeds budget"),
		field.Required(path, "must be set"),
		field.Duplicate(path, "k"),
	}
	b, err := json.Marshal(celtypes.FieldErrors(errs))
	if err != nil {
		t.Fatal(err)
	}
	var wire []celtypes.FieldError
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	got := celtypes.ErrorList(wire)
	if len(got) != len(errs) {
		t.Fatalf("%d errors, want %d", len(got), len(errs))
	}
	for i := range errs {
		if got[i].Error() != errs[i].Error() || got[i].Type != errs[i].Type {
			t.Errorf("got  %s (%s)\nwant %s (%s)", got[i], got[i].Type, errs[i], errs[i].Type)
		}
	}
}

// A policy's inputs keep their numbers' types: CEL tells an int from a
// double.
func TestPolicyInput_numbers(t *testing.T) {
	in := celtypes.PolicyInput{
		Object:          map[string]any{"i": int64(3), "f": 3.0, "g": 2.5, "big": int64(1) << 60, "list": []any{int64(1), 1.0}},
		Request:         map[string]any{"dryRun": true, "name": "x"},
		NamespaceObject: json.Number("4"),
		RequestResource: celtypes.AuthzCheck{Resource: "configmaps", Namespace: "ns"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got celtypes.PolicyInput
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := in
	want.NamespaceObject = int64(4)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}
