package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// An entry is one valid object of the corpus and the mutations written for
// it by hand.
type entry struct {
	Object    map[string]any `json:"object"`
	Mutations []handMutation `json:"mutations"`
}

// A handMutation is a JSON merge patch that makes the object invalid in a
// way no single-field mutation finds (a Secret's type changed on update).
type handMutation struct {
	Name  string         `json:"name"`
	Patch map[string]any `json:"patch"`
	// Only, if set, is the one verb ("create" or "update") it is tried on.
	Only string `json:"only"`
	// Subresource, if set, is where the update is sent (status, finalize).
	Subresource string `json:"subresource"`
}

type corpus []entry

// loadCorpus reads every *.yaml file of dir: each a list of entries.
func loadCorpus(dir string) (corpus, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus in %s (run from the repository root, or pass -corpus)", dir)
	}
	var c corpus
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var entries []entry
		if err := yaml.UnmarshalStrict(b, &entries); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		c = append(c, entries...)
	}
	return c, nil
}

// gvk is e's object's kind.
func (e entry) gvk() schema.GroupVersionKind {
	apiVersion, _ := e.Object["apiVersion"].(string)
	kind, _ := e.Object["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// typeName names e's type as the report does: Kind, or Kind.group.
func (e entry) typeName() string {
	gvk := e.gvk()
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

func (e entry) name() string {
	md, _ := e.Object["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name
}

// only keeps the entries of the kinds named (Kind or Kind.group).
func (c corpus) only(kinds []string) corpus {
	var out corpus
	for _, e := range c {
		if slices.Contains(kinds, e.typeName()) || slices.Contains(kinds, e.gvk().Kind) {
			out = append(out, e)
		}
	}
	return out
}

// types lists the corpus's types, in corpus order.
func (c corpus) types() []string {
	var out []string
	for _, e := range c {
		if t := e.typeName(); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// withRunID returns e's object with RUNID replaced by id.
func (e entry) withRunID(id string) map[string]any {
	return replaceStrings(deepCopy(e.Object), func(s string) string { return strings.ReplaceAll(s, "RUNID", id) }).(map[string]any)
}

func replaceStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		for i := range v {
			v[i] = replaceStrings(v[i], f)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = replaceStrings(e, f)
		}
		return out
	}
	return v
}
