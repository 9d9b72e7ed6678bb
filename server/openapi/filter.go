package openapi

import (
	"encoding/json"
	"slices"
	"strings"

	"kubeplay/server/internal/apipath"
)

// withoutResources returns the document of the group version whose paths
// start with prefix ("/apis/batch/v1/") without the paths of the resources
// off, nor the schemas only they referenced, as kube-apiserver builds it
// under --runtime-config=<gv>/<resource>=false.
func withoutResources(doc []byte, prefix string, off []string) []byte {
	var d map[string]any
	if json.Unmarshal(doc, &d) != nil {
		return doc
	}
	paths, _ := d["paths"].(map[string]any)
	for p := range paths {
		if slices.Contains(off, apipath.Resource(strings.TrimPrefix(p, prefix))) {
			delete(paths, p)
		}
	}
	components, _ := d["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	reached := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !reached[name] {
					reached[name] = true
					walk(schemas[name])
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(paths)
	for name := range schemas {
		if !reached[name] {
			delete(schemas, name)
		}
	}
	out, err := json.Marshal(d)
	if err != nil {
		return doc
	}
	return out
}
