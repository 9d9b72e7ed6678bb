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

// builtinSchemaJSON is the JSON of one schema of Schemas, as the document
// that defines it first writes it; nil if none does.
func builtinSchemaJSON(name string) (json.RawMessage, error) {
	return documentSchemas.lookup(name)
}

// documentSchemas splits the embedded v3 documents' components.schemas
// into each schema's JSON, one document at a time and only as lookups need
// them, in Schemas's order. A custom resource's document copies a few meta
// schemas, which the first document holds: splitting that one costs a
// small part of decoding every document into spec.Schema (Schemas), which
// envtest's first CRD used to wait for.
var documentSchemas = &schemaIndex{}

type schemaIndex struct {
	mu      sync.Mutex
	listed  bool
	pending []string // the documents not split yet, in order
	schemas map[string]json.RawMessage
}

func (x *schemaIndex) lookup(name string) (json.RawMessage, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.listed {
		files, err := fs.Glob(documents, "spec/v3/*.json")
		if err != nil {
			return nil, err
		}
		x.pending, x.schemas, x.listed = files, map[string]json.RawMessage{}, true
	}
	for x.schemas[name] == nil && len(x.pending) > 0 {
		f := x.pending[0]
		b, err := documents.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", f, err)
		}
		x.pending = x.pending[1:]
		for n, s := range doc.Components.Schemas {
			if _, ok := x.schemas[n]; !ok {
				x.schemas[n] = s
			}
		}
	}
	return x.schemas[name], nil
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
