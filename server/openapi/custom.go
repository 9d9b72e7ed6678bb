package openapi

import (
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
	for k, v := range t.Schema {
		kind[k] = v
	}
	props := map[string]any{}
	if p, ok := t.Schema["properties"].(map[string]any); ok {
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
	list := map[string]any{
		"description": t.ListKindName + " is a list of " + t.GVK.Kind,
		"type":        "object",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": apiVersionDoc, "type": "string"},
			"items": map[string]any{
				"description": "List of " + t.Plural + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array", "items": ref(name),
			},
			"kind":     map[string]any{"description": kindDoc, "type": "string"},
			"metadata": map[string]any{"description": listMetadataDoc, "allOf": []any{ref(metaPrefix + "ListMeta")}},
		},
		"x-kubernetes-group-version-kind": gvkExtension(listGVK),
	}
	out := map[string]any{name: kind, DefinitionName(listGVK): list}
	roots := []string{metaPrefix + "ObjectMeta", metaPrefix + "ListMeta", metaPrefix + "Status", metaPrefix + "DeleteOptions", metaPrefix + "Patch"}
	if t.Scale {
		roots = append(roots, "io.k8s.api.autoscaling.v1.Scale")
	}
	builtin, err := Schemas()
	if err != nil {
		return nil, err
	}
	for len(roots) > 0 {
		n := roots[0]
		roots = roots[1:]
		if _, done := out[n]; done {
			continue
		}
		b, err := json.Marshal(builtin[n])
		if err != nil {
			return nil, err
		}
		var s any
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		out[n] = s
		roots = append(roots, refsOf(s)...)
	}
	return out, nil
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
		addPaths(paths, t)
	}
	return json.Marshal(map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	})
}

func addPaths(paths map[string]any, t CustomType) {
	gv := t.GVK.GroupVersion()
	base := "/apis/" + gv.Group + "/" + gv.Version
	tag := tagOf(gv)
	kind, listKind := DefinitionName(t.GVK), DefinitionName(gv.WithKind(t.ListKindName))
	op := func(action, verb, description, def string) map[string]any {
		content := map[string]any{}
		for _, mt := range []string{"application/json", "application/yaml"} {
			content[mt] = map[string]any{"schema": ref(def)}
		}
		return map[string]any{
			"tags": []any{tag}, "description": description, "operationId": verb,
			"responses": map[string]any{
				"200": map[string]any{"description": "OK", "content": content},
				"401": map[string]any{"description": "Unauthorized"},
			},
			"x-kubernetes-action":             action,
			"x-kubernetes-group-version-kind": map[string]any{"group": gv.Group, "version": gv.Version, "kind": t.GVK.Kind},
		}
	}
	id := strings.ToUpper(tag[:1]) + tag[1:]
	ns, scope := "", ""
	if t.Namespaced {
		ns, scope = "/namespaces/{namespace}", "Namespaced"
	}
	k := t.GVK.Kind
	paths[base+ns+"/"+t.Plural] = map[string]any{
		"get":    op("list", "list"+id+scope+k, "list objects of kind "+k, listKind),
		"post":   op("post", "create"+id+scope+k, "create a "+k, kind),
		"delete": op("deletecollection", "deletecollection"+id+scope+k, "delete collection of "+k, metaPrefix+"Status"),
	}
	paths[base+ns+"/"+t.Plural+"/{name}"] = map[string]any{
		"get":    op("get", "read"+id+scope+k, "read the specified "+k, kind),
		"put":    op("put", "replace"+id+scope+k, "replace the specified "+k, kind),
		"patch":  op("patch", "patch"+id+scope+k, "partially update the specified "+k, kind),
		"delete": op("delete", "delete"+id+scope+k, "delete a "+k, metaPrefix+"Status"),
	}
	if t.Namespaced {
		paths[base+"/"+t.Plural] = map[string]any{"get": op("list", "list"+id+k+"ForAllNamespaces", "list objects of kind "+k, listKind)}
	}
	if t.Status {
		paths[base+ns+"/"+t.Plural+"/{name}/status"] = map[string]any{
			"get":   op("get", "read"+id+scope+k+"Status", "read status of the specified "+k, kind),
			"put":   op("put", "replace"+id+scope+k+"Status", "replace status of the specified "+k, kind),
			"patch": op("patch", "patch"+id+scope+k+"Status", "partially update status of the specified "+k, kind),
		}
	}
	if t.Scale {
		scale := "io.k8s.api.autoscaling.v1.Scale"
		paths[base+ns+"/"+t.Plural+"/{name}/scale"] = map[string]any{
			"get":   op("get", "read"+id+scope+k+"Scale", "read scale of the specified "+k, scale),
			"put":   op("put", "replace"+id+scope+k+"Scale", "replace scale of the specified "+k, scale),
			"patch": op("patch", "patch"+id+scope+k+"Scale", "partially update scale of the specified "+k, scale),
		}
	}
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
