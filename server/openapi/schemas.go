package openapi

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schemas returns the components.schemas of every embedded v3 document,
// keyed by definition name ("io.k8s.api.apps.v1.Deployment"). References
// between them ("#/components/schemas/<name>") resolve within the map. The
// map is parsed once per process and must not be modified.
var Schemas = sync.OnceValues(loadSchemas)

func loadSchemas() (map[string]*spec.Schema, error) {
	files, err := fs.Glob(documents, "spec/v3/*.json")
	if err != nil {
		return nil, err
	}
	out := map[string]*spec.Schema{}
	for _, f := range files {
		b, err := documents.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", f, err)
		}
		for name, s := range doc.Components.Schemas {
			if _, ok := out[name]; !ok {
				out[name] = s
			}
		}
	}
	return out, nil
}

// Definitions maps each kind to the name of its schema in Schemas, from the
// schemas' x-kubernetes-group-version-kind extensions.
var Definitions = sync.OnceValues(func() (map[schema.GroupVersionKind]string, error) {
	schemas, err := Schemas()
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionKind]string{}
	for name, s := range schemas {
		list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			g, _ := m["group"].(string)
			v, _ := m["version"].(string)
			k, _ := m["kind"].(string)
			out[schema.GroupVersionKind{Group: g, Version: v, Kind: k}] = name
		}
	}
	return out, nil
})
