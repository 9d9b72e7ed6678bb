package fieldmanager_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"kubeplay/server/fieldmanager"
	"kubeplay/server/openapi"
)

// TestUpdate_createShortcut checks that the managedFields Update records
// for a create without kube-apiserver's field manager are the ones that
// field manager records, but for the time: over the validation corpus, the
// objects the golden scenarios send, each also as the server passes it on
// (with its server-set metadata, materialized) and with empty, null and
// untracked fields, and over custom resources.
func TestUpdate_createShortcut(t *testing.T) {
	defs, err := fieldmanager.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	var m fieldmanager.Managers
	resets := [][]fieldpath.Path{nil, {fieldpath.MakePathOrDie("metadata", "annotations"), fieldpath.MakePathOrDie("spec", "replicas")}}
	recorded := 0
	// Named by the client, from its User-Agent, by none.
	managers := []string{"test-manager", "kubectl\xff", ""}
	for i, obj := range builtinObjects(t) {
		manager := managers[i%len(managers)]
		gvk := gvkOf(obj)
		if defs[gvk] == "" {
			continue
		}
		for _, v := range variants(gvk, obj) {
			for _, statusElsewhere := range []bool{false, true} {
				for _, reset := range resets {
					f, err := m.For(gvk, "", statusElsewhere, reset)
					if err != nil {
						t.Fatal(err)
					}
					if compareCreate(t, f, v, manager, fmt.Sprintf("%v statusElsewhere=%v resets=%v", gvk, statusElsewhere, reset)) {
						recorded++
					}
				}
			}
		}
	}
	for _, preserveUnknownFields := range []bool{false, true} {
		tc, err := fieldmanager.CustomTypeConverter(widgetSchemas(t), preserveUnknownFields)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range widgets() {
			for _, v := range variants(widgetKind, obj) {
				for _, statusElsewhere := range []bool{false, true} {
					f, err := m.ForType(tc, widgetKind, "", statusElsewhere, nil)
					if err != nil {
						t.Fatal(err)
					}
					if compareCreate(t, f, v, "test-manager", fmt.Sprintf("Widget preserveUnknownFields=%v statusElsewhere=%v", preserveUnknownFields, statusElsewhere)) {
						recorded++
					}
				}
			}
		}
	}
	// Most of the objects are recorded by the shortcut: else this test
	// compares little.
	if recorded < 2000 {
		t.Errorf("the shortcut recorded %d creates", recorded)
	}
}

// compareCreate compares the two ways of recording the create of obj by
// manager; it reports whether the shortcut recorded it.
func compareCreate(t *testing.T, f *fieldmanager.FieldManager, obj map[string]any, manager, name string) bool {
	t.Helper()
	short := runtime.DeepCopyJSON(obj)
	entries, ok := fieldmanager.CreatedByShortcut(f, short, manager)
	full := fieldmanager.CreatedByFieldManager(f, runtime.DeepCopyJSON(obj), manager)
	if !ok {
		return false
	}
	md := short["metadata"].(map[string]any)
	if entries != nil {
		md["managedFields"] = entries
	} else {
		delete(md, "managedFields")
	}
	for _, o := range []map[string]any{short, full} {
		for _, e := range asSlice(o["metadata"].(map[string]any)["managedFields"]) {
			e := e.(map[string]any)
			if _, err := time.Parse(time.RFC3339, e["time"].(string)); err != nil {
				t.Errorf("%s: time: %v", name, err)
			}
			delete(e, "time")
		}
	}
	if !reflect.DeepEqual(short, full) {
		a, _ := json.Marshal(short)
		b, _ := json.Marshal(full)
		t.Errorf("%s: the shortcut gives\n%s\nthe field manager\n%s", name, a, b)
	}
	return entries != nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func gvkOf(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// builtinObjects are the objects of the validation corpus, each also with
// its hand-written mutations, and the objects the golden scenarios send.
func builtinObjects(t *testing.T) []map[string]any {
	t.Helper()
	var objs []map[string]any
	corpus, err := filepath.Glob("../../internal/validationdiff/testdata/corpus/*.yaml")
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, file := range corpus {
		var entries []struct {
			Object    map[string]any `json:"object"`
			Mutations []struct {
				Patch map[string]any `json:"patch"`
			} `json:"mutations"`
		}
		readYAML(t, file, &entries)
		for _, e := range entries {
			objs = append(objs, e.Object)
			doc, _ := json.Marshal(e.Object)
			for _, mu := range e.Mutations {
				patch, _ := json.Marshal(mu.Patch)
				b, err := jsonpatch.MergePatch(doc, patch)
				if err != nil {
					t.Fatal(err)
				}
				var obj map[string]any
				if err := json.Unmarshal(b, &obj); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, obj)
			}
		}
	}
	scenarios, err := filepath.Glob("../testdata/scenarios/*.json")
	if err != nil || len(scenarios) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range scenarios {
		var s struct {
			Steps []struct {
				Body any `json:"body"`
			} `json:"steps"`
		}
		readYAML(t, file, &s)
		for _, step := range s.Steps {
			// The server gives every object its metadata.
			if obj, ok := step.Body.(map[string]any); ok && obj["kind"] != nil && obj["metadata"] != nil {
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// variants are obj as sent; with the metadata the server sets before it
// records the fields, and materialized as it is then; and with fields
// that are empty, null, untracked or not of the schema.
func variants(gvk schema.GroupVersionKind, obj map[string]any) []map[string]any {
	served := runtime.DeepCopyJSON(obj)
	md, _ := served["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		served["metadata"] = md
	}
	md["namespace"] = "default"
	md["uid"] = "7c2a1f4e-2b1c-4d8e-9f3a-0e5d6c7b8a90"
	md["creationTimestamp"] = "2026-01-02T03:04:05Z"
	md["generation"] = int64(1)
	materialized := runtime.DeepCopyJSON(served)
	_ = fieldmanager.Materialize(gvk, materialized)

	empty := runtime.DeepCopyJSON(materialized)
	md = empty["metadata"].(map[string]any)
	md["labels"] = map[string]any{}
	md["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": ""}
	md["finalizers"] = []any{}
	md["ownerReferences"] = nil
	md["generateName"] = ""
	if _, ok := empty["status"]; !ok {
		empty["status"] = map[string]any{}
	}
	if spec, ok := empty["spec"].(map[string]any); ok {
		for k, v := range spec {
			switch v.(type) {
			case map[string]any:
				spec[k] = map[string]any{}
			case []any:
				spec[k] = []any{}
			default:
				spec[k] = nil
			}
			break
		}
	}
	unknown := runtime.DeepCopyJSON(obj)
	unknown["notAField"] = "x"
	wrongKind := runtime.DeepCopyJSON(obj)
	wrongKind["kind"] = "Other"
	withManagedFields := runtime.DeepCopyJSON(materialized)
	withManagedFields["metadata"].(map[string]any)["managedFields"] = []any{}
	return []map[string]any{obj, served, materialized, empty, unknown, wrongKind, withManagedFields}
}

var widgetKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func widgetSchemas(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(`
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer}
      size: {type: string, default: small}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          properties:
            name: {type: string}
            port: {type: integer}
      tags:
        type: array
        x-kubernetes-list-type: set
        items: {type: string}
      args:
        type: array
        items: {type: string}
      selector:
        type: object
        x-kubernetes-map-type: atomic
        additionalProperties: {type: string}
      config:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  status:
    type: object
    properties:
      ready: {type: boolean}
      conditions:
        type: array
        items:
          type: object
          properties:
            type: {type: string}
            status: {type: string}
`), &s); err != nil {
		t.Fatal(err)
	}
	schemas, err := openapi.CustomSchemas(openapi.CustomType{GVK: widgetKind, Plural: "widgets", Namespaced: true, Schema: s, Status: true, ListKindName: "WidgetList"})
	if err != nil {
		t.Fatal(err)
	}
	return schemas
}

func widgets() []map[string]any {
	var objs []map[string]any
	for _, spec := range []string{
		`{}`,
		`{"replicas": 2, "size": "large"}`,
		`{"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}], "tags": ["a", "b"], "args": ["x", "x"]}`,
		`{"ports": [{"name": "dup", "port": 1}, {"name": "dup", "port": 2}], "tags": ["a", "a"]}`,
		`{"selector": {"app": "w"}, "config": {"nested": {"deep": [1, 2, {"x": null}]}, "empty": {}}}`,
		`{"replicas": null, "ports": [], "tags": null, "config": {}}`,
		`{"extra": "not in the schema"}`,
	} {
		var s any
		if err := json.Unmarshal([]byte(spec), &s); err != nil {
			panic(err)
		}
		objs = append(objs, map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "labels": map[string]any{"app": "w"}},
			"spec":     s,
			"status":   map[string]any{"ready": true, "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
		})
	}
	return objs
}
