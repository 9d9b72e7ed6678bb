package fieldmanager_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/fieldmanager"
)

// BenchmarkUpdate_create records the managedFields of a created config map
// as BenchmarkCreate_ConfigMap's server does.
//
//	go test ./server/fieldmanager -run '^$' -bench 'BenchmarkUpdate_create' -benchmem
func BenchmarkUpdate_create(b *testing.B) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	var m fieldmanager.Managers
	f, err := m.For(gvk, "", false, nil)
	if err != nil {
		b.Fatal(err)
	}
	value := strings.Repeat("x", 64)
	b.ReportAllocs()
	for b.Loop() {
		obj := fieldmanager.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default", "uid": "7c2a1f4e-2b1c-4d8e-9f3a-0e5d6c7b8a90",
				"creationTimestamp": "2026-01-02T03:04:05Z", "labels": map[string]any{"app": "bench"}},
			"data": map[string]any{"k": value}}
		fieldmanager.Update(f, nil, obj, "bench")
	}
}
