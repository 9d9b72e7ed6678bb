package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// uncovered lists the types t serves in each group's preferred version
// whose objects can be created and updated (not the reviews, which are
// never stored) and of which c has no object, as the report names them.
func uncovered(ctx context.Context, t target, c corpus) ([]string, error) {
	get := func(path string, into any) error {
		code, body, err := t.do(ctx, "GET", path, nil)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("GET %s: %d %s", path, code, body)
		}
		return json.Unmarshal(body, into)
	}
	var groups metav1.APIGroupList
	if err := get("/apis", &groups); err != nil {
		return nil, err
	}
	paths := []string{"/api/v1"}
	for _, g := range groups.Groups {
		paths = append(paths, "/apis/"+g.PreferredVersion.GroupVersion)
	}
	covered := c.types()
	var out []string
	for _, p := range paths {
		var list metav1.APIResourceList
		if err := get(p, &list); err != nil {
			return nil, err
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "create") || !slices.Contains(r.Verbs, "update") {
				continue
			}
			name := r.Kind
			if gv.Group != "" {
				name += "." + gv.Group
			}
			if !slices.Contains(covered, name) && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out, nil
}
