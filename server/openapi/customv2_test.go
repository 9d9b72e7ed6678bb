package openapi

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`{"rule":"self.size() \u003e 0 \u0026\u0026 a \u003c b"}`: `{"rule":"self.size() > 0 && a < b"}`,
		`{"a":"\\u003c stays escaped","b":"\u00e9\n"}`:            `{"a":"\\u003c stays escaped","b":"\u00e9\n"}`,
		`"ends with \\"`: `"ends with \\"`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

// BenchmarkCustomV2 measures what the first /openapi/v2 request after a
// CRD change costs: the JSON document with one custom type, and its
// protobuf form.
func BenchmarkCustomV2(b *testing.B) {
	types := []CustomType{{
		GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Plural: "widgets", Namespaced: true,
		Schema: map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object"}}}, ListKindName: "WidgetList",
	}}
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := (&customV2{types: types}).document(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		c := &customV2{types: types}
		if _, _, err := c.document(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			c.protoOnce = sync.Once{}
			if _, err := c.proto(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProtoV2 measures what the first /openapi/v2 request for
// protobuf costs: the recorded document's protobuf form.
func BenchmarkProtoV2(b *testing.B) {
	for b.Loop() {
		if _, err := protoV2(); err != nil {
			b.Fatal(err)
		}
	}
}
