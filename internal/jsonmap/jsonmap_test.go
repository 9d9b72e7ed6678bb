package jsonmap_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"kubeplay/internal/jsonmap"
)

func TestAccessors(t *testing.T) {
	var o jsonmap.Object
	if err := json.Unmarshal([]byte(`{
		"metadata": {"name": "a", "generation": 3, "finalizers": ["x", 1, "y"], "labels": "not an object"},
		"spec": {"replicas": 2.0}
	}`), &o); err != nil {
		t.Fatal(err)
	}
	o["status"] = jsonmap.Object{"replicas": int64(4), "ready": json.Number("5"), "bad": json.Number("1.5")}

	if got := jsonmap.String(o, "metadata", "name"); got != "a" {
		t.Errorf(`String(metadata, name) = %q, want "a"`, got)
	}
	for _, tt := range []struct {
		path   []string
		want   int64
		wantOK bool
	}{
		{[]string{"metadata", "generation"}, 3, true},
		{[]string{"spec", "replicas"}, 2, true},
		{[]string{"status", "replicas"}, 4, true},
		{[]string{"status", "ready"}, 5, true},
		{[]string{"status", "bad"}, 0, false},
		{[]string{"metadata", "name"}, 0, false},
		{[]string{"spec", "missing"}, 0, false},
		{[]string{"nowhere", "replicas"}, 0, false},
	} {
		if n, ok := jsonmap.Int(o, tt.path...); n != tt.want || ok != tt.wantOK {
			t.Errorf("Int(%v) = %d, %v; want %d, %v", tt.path, n, ok, tt.want, tt.wantOK)
		}
	}
	if got := jsonmap.Strings(o, "metadata", "finalizers"); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("Strings(finalizers) = %q", got)
	}
	if got := jsonmap.Strings(o, "metadata", "name"); got != nil {
		t.Errorf("Strings of a string = %q, want nil", got)
	}
	if got := jsonmap.List(o, "metadata", "finalizers"); len(got) != 3 {
		t.Errorf("List(finalizers) = %v", got)
	}
	if got := jsonmap.Child(o, "metadata", "labels"); got != nil {
		t.Errorf("Child of a string = %v, want nil", got)
	}
	if got := jsonmap.Child(nil, "metadata"); got != nil {
		t.Errorf("Child of nil = %v, want nil", got)
	}
}
