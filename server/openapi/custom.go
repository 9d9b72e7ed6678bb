package openapi

import (
	"embed"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CustomType is what the OpenAPI document of a CRD's group version says of
// one resource.
type CustomType struct {
	GVK        schema.GroupVersionKind
	Plural     string
	Namespaced bool
	// Schema is the version's openAPIV3Schema (decoded JSON).
	Schema       map[string]any
	Status       bool
	Scale        bool
	ListKindName string
}

const (
	metaPrefix        = "io.k8s.apimachinery.pkg.apis.meta.v1."
	apiVersionDoc     = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDoc           = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
	objectMetadataDoc = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	listMetadataDoc   = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// DefinitionName is the name kube-apiserver gives a custom kind's schema:
// the group reversed, the version and the kind ("com.example.v1.Widget").
func DefinitionName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gvk.Version + "." + gvk.Kind
}

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func gvkExtension(gvk schema.GroupVersionKind) []any {
	return []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}}
}

// CustomSchemas returns the components.schemas of a custom type's
// document: its kind and list kind, and the meta types they refer to.
func CustomSchemas(t CustomType) (map[string]any, error) {
	kind := map[string]any{}
	b, err := json.Marshal(t.Schema) // a copy, which publishing changes
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &kind); err != nil {
		return nil, err
	}
	publishIntOrString(kind)
	props := map[string]any{}
	if p, ok := kind["properties"].(map[string]any); ok {
		maps.Copy(props, p)
	}
	props["apiVersion"] = map[string]any{"description": apiVersionDoc, "type": "string"}
	props["kind"] = map[string]any{"description": kindDoc, "type": "string"}
	props["metadata"] = map[string]any{"description": objectMetadataDoc, "allOf": []any{ref(metaPrefix + "ObjectMeta")}}
	kind["properties"] = props
	kind["type"] = "object"
	kind["x-kubernetes-group-version-kind"] = gvkExtension(t.GVK)
	name := DefinitionName(t.GVK)
	listGVK := t.GVK.GroupVersion().WithKind(t.ListKindName)
	list := listSchema(t, ref(name), map[string]any{"description": listMetadataDoc, "allOf": []any{ref(metaPrefix + "ListMeta")}})
	out := map[string]any{name: kind, DefinitionName(listGVK): list}
	roots := []string{metaPrefix + "ObjectMeta", metaPrefix + "ListMeta", metaPrefix + "Status", metaPrefix + "DeleteOptions", metaPrefix + "Patch"}
	if t.Scale {
		roots = append(roots, "io.k8s.api.autoscaling.v1.Scale")
	}
	for len(roots) > 0 {
		n := roots[0]
		roots = roots[1:]
		if _, done := out[n]; done {
			continue
		}
		b, err := builtinSchemaJSON(n)
		if err != nil {
			return nil, err
		}
		var s any
		if b != nil {
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, err
			}
		}
		if n == metaPrefix+"DeleteOptions" {
			dropGroupVersionKinds(s, "admission.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "imagepolicy.k8s.io")
		}
		out[n] = s
		roots = append(roots, refsOf(s)...)
	}
	return out, nil
}

// listSchema is the schema of t's list kind, given how its document
// refers to t's kind's schema and describes the list's metadata.
func listSchema(t CustomType, kindRef, metadata map[string]any) map[string]any {
	return map[string]any{
		"description": t.ListKindName + " is a list of " + t.GVK.Kind,
		"type":        "object",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": apiVersionDoc, "type": "string"},
			"items": map[string]any{
				"description": "List of " + t.Plural + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array", "items": kindRef,
			},
			"kind":     map[string]any{"description": kindDoc, "type": "string"},
			"metadata": metadata,
		},
		"x-kubernetes-group-version-kind": gvkExtension(t.GVK.GroupVersion().WithKind(t.ListKindName)),
	}
}

// publishIntOrString spells out x-kubernetes-int-or-string as an anyOf of
// integer and string, as kube-apiserver publishes it.
func publishIntOrString(v any) {
	switch x := v.(type) {
	case map[string]any:
		if b, _ := x["x-kubernetes-int-or-string"].(bool); b {
			if _, ok := x["anyOf"]; !ok {
				x["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
			}
		}
		for _, e := range x {
			publishIntOrString(e)
		}
	case []any:
		for _, e := range x {
			publishIntOrString(e)
		}
	}
}

// dropGroupVersionKinds removes groups from a schema's
// x-kubernetes-group-version-kind: kube-apiserver's documents of custom
// resources list DeleteOptions in the groups of its built-in scheme only.
func dropGroupVersionKinds(s any, groups ...string) {
	m, _ := s.(map[string]any)
	list, _ := m["x-kubernetes-group-version-kind"].([]any)
	kept := []any{}
	for _, e := range list {
		gvk, _ := e.(map[string]any)
		if g, _ := gvk["group"].(string); !slices.Contains(groups, g) {
			kept = append(kept, e)
		}
	}
	m["x-kubernetes-group-version-kind"] = kept
}

// refsOf lists the definitions a schema refers to.
func refsOf(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, strings.TrimPrefix(s, "#/components/schemas/"))
			}
			out = append(out, refsOf(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, refsOf(e)...)
		}
	}
	return out
}

// CustomDocument is the /openapi/v3 document of a CRD group version: the
// paths of its resources and their schemas.
func CustomDocument(types []CustomType) ([]byte, error) {
	paths := map[string]any{}
	schemas := map[string]any{}
	for _, t := range types {
		s, err := CustomSchemas(t)
		if err != nil {
			return nil, err
		}
		maps.Copy(schemas, s)
		if err := addPaths(paths, t); err != nil {
			return nil, err
		}
	}
	return json.Marshal(map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	})
}

// The paths of a custom resource, as kube-apiserver v1.35.4 describes them
// in v3 and v2, recorded for a namespaced and a cluster-scoped resource with
// status and scale subresources, with placeholders for the names.
//
//go:embed spec/crd/namespaced.json spec/crd/cluster.json spec/crd/v2-namespaced.json spec/crd/v2-cluster.json
var pathTemplates embed.FS

func addPaths(paths map[string]any, t CustomType) error {
	items, err := pathItems("", t)
	if err != nil {
		return err
	}
	for path, raw := range items {
		var item any
		if err := json.Unmarshal(raw, &item); err != nil {
			return err
		}
		paths[path] = item
	}
	return nil
}

// pathItems are the path items of t from the recorded templates of v3
// (prefix "") or v2 ("v2-"), without those of the subresources t lacks.
func pathItems(prefix string, t CustomType) (map[string]json.RawMessage, error) {
	file := "spec/crd/" + prefix + "cluster.json"
	if t.Namespaced {
		file = "spec/crd/" + prefix + "namespaced.json"
	}
	gv := t.GVK.GroupVersion()
	tag := tagOf(gv)
	id := strings.ToUpper(tag[:1]) + strings.ReplaceAll(tag[1:], "_v", "V")
	tpl, err := pathTemplates.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer("{{listdef}}", DefinitionName(gv.WithKind(t.ListKindName)), "{{def}}", DefinitionName(t.GVK),
		"{{tag}}", tag, "{{ID}}", id, "{{group}}", gv.Group, "{{version}}", gv.Version, "{{plural}}", t.Plural, "{{Kind}}", t.GVK.Kind)
	var items map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Replace(string(tpl))), &items); err != nil {
		return nil, err
	}
	for path := range items {
		if strings.HasSuffix(path, "/status") && !t.Status || strings.HasSuffix(path, "/scale") && !t.Scale {
			delete(items, path)
		}
	}
	return items, nil
}

// tagOf is the operations' tag: "exampleCom_v1" for example.com/v1.
func tagOf(gv schema.GroupVersion) string {
	var b strings.Builder
	upper := false
	for i, r := range gv.Group {
		switch {
		case r == '.' || r == '-':
			upper = true
		case upper && i > 0:
			b.WriteString(strings.ToUpper(string(r)))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + "_" + gv.Version
}
