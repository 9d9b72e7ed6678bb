package fieldmanager

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// TestSchemas_AsKubeOpenAPIDecodes checks that the schemas built by hand
// give structured-merge-diff the same types, and strategic merge patch the
// same extensions, as kube-openapi's own decoding of the same JSON.
func TestSchemas_AsKubeOpenAPIDecodes(t *testing.T) {
	fast, err := Schemas()
	if err != nil {
		t.Fatal(err)
	}
	var slow map[string]*spec.Schema
	if err := json.Unmarshal(schemasJSON, &slow); err != nil {
		t.Fatal(err)
	}
	got, err := schemaconv.ToSchemaFromOpenAPI(fast, false)
	if err != nil {
		t.Fatal(err)
	}
	want, err := schemaconv.ToSchemaFromOpenAPI(slow, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Types) != len(want.Types) || len(got.Types) < 500 {
		t.Fatalf("%d types, kube-openapi's decoding gives %d", len(got.Types), len(want.Types))
	}
	// Compared as JSON, fields sorted: schemaconv lists a map's fields in
	// map order, and schema.Map caches an index in unexported fields.
	canonical := func(td smdschema.TypeDef) []byte {
		if td.Map != nil {
			slices.SortFunc(td.Map.Fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })
		}
		b, _ := json.Marshal(td)
		return b
	}
	byName := map[string]string{}
	for _, td := range got.Types {
		byName[td.Name] = string(canonical(td))
	}
	for _, td := range want.Types {
		b := canonical(td)
		if byName[td.Name] != string(b) {
			t.Errorf("type %s differs:\n got: %s\nwant: %s", td.Name, byName[td.Name], b)
		}
	}
	for name, s := range slow {
		if !reflect.DeepEqual(fast[name].Extensions, s.Extensions) {
			t.Errorf("%s: extensions %v, kube-openapi's decoding gives %v", name, fast[name].Extensions, s.Extensions)
		}
	}
}
