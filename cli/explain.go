package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// schema is the part of an OpenAPI v3 schema that explain reads.
type schema struct {
	Description string              `json:"description"`
	Type        string              `json:"type"`
	Ref         string              `json:"$ref"`
	AllOf       []schema            `json:"allOf"`
	Items       *schema             `json:"items"`
	Additional  *schema             `json:"additionalProperties"`
	Properties  map[string]schema   `json:"properties"`
	Required    []string            `json:"required"`
	Enum        []any               `json:"enum"`
	GVK         []map[string]string `json:"x-kubernetes-group-version-kind"`
}

// explain prints the OpenAPI v3 description of a type or one of its fields
// (TYPE.field.field) with its fields one level deep, laid out as kubectl
// explain prints it.
func (c *Console) explain(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	if len(args) != 1 {
		return usageError("explain TYPE[.FIELD...], such as: explain configmaps.data")
	}
	parts := strings.Split(args[0], ".")
	r, err := c.lookup(ctx, parts[0])
	if err != nil {
		return err
	}
	var doc struct {
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := c.getJSON(ctx, "/openapi/v3"+r.prefix(), &doc); err != nil {
		return err
	}
	e := explainer{schemas: doc.Components.Schemas}
	var cur field
	found := false
	for name, s := range e.schemas {
		for _, gvk := range s.GVK {
			if gvk["group"] == r.Group && gvk["version"] == r.Version && gvk["kind"] == r.Kind {
				cur, found = field{schema: s, target: s, refName: refName(name)}, true
			}
		}
	}
	if !found {
		return usageError(fmt.Sprintf("couldn't find resource for %q", r.apiVersion()+", Kind="+r.Kind))
	}
	path := parts[1:]
	for i, name := range path {
		props := e.body(cur).Properties
		next, ok := props[name]
		if !ok {
			return usageError(fmt.Sprintf("field %q does not exist", strings.Join(path[:i+1], ".")))
		}
		cur = e.field(next)
	}
	if r.Group != "" {
		fmt.Fprintf(out, "GROUP:      %s\n", r.Group)
	}
	fmt.Fprintf(out, "KIND:       %s\nVERSION:    %s\n\n", r.Kind, r.Version)
	if len(path) > 0 {
		fmt.Fprintf(out, "FIELD: %s <%s>\n", path[len(path)-1], e.typeName(cur))
		if enum := enumValues(cur); len(enum) > 0 {
			fmt.Fprintf(out, "ENUM:\n    %s\n\n", strings.Join(enum, "\n    "))
		} else {
			fmt.Fprint(out, "\n\n")
		}
	}
	fmt.Fprintf(out, "DESCRIPTION:\n%s    \n", wrap(e.description(cur, len(path) > 0), "    "))
	body := e.body(cur)
	if len(body.Properties) > 0 {
		fmt.Fprint(out, "FIELDS:\n")
		names := make([]string, 0, len(body.Properties))
		for n := range body.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := e.field(body.Properties[n])
			req := ""
			if contains(body.Required, n) {
				req = " -required-"
			}
			fmt.Fprintf(out, "  %s\t<%s>%s\n", n, e.typeName(p), req)
			if enum := enumValues(p); len(enum) > 0 {
				fmt.Fprintf(out, "  enum: %s\n", strings.Join(enum, ", "))
			}
			fmt.Fprintf(out, "%s\n", wrap(p.schema.Description, "    "))
		}
	}
	_, err = fmt.Fprintln(out)
	return err
}

// field is a property's schema with its $ref (or allOf) followed: schema
// holds the property's own description, target the schema it refers to and
// refName that schema's short name ("ObjectMeta"), if any.
type field struct {
	schema  schema
	target  schema
	refName string
}

type explainer struct{ schemas map[string]schema }

func (e explainer) field(s schema) field {
	f := field{schema: s, target: s}
	for f.target.Ref != "" || len(f.target.AllOf) == 1 {
		ref := f.target.Ref
		if ref == "" {
			ref = f.target.AllOf[0].Ref
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		f.target, f.refName = e.schemas[name], refName(name)
	}
	if f.refName == "" {
		f.target = s
	}
	return f
}

// body is the object schema whose fields f lists: its target's, through
// arrays' items.
func (e explainer) body(f field) schema {
	t := f.target
	for t.Type == "array" && t.Items != nil {
		t = e.field(*t.Items).target
	}
	return t
}

// description is the field's own, followed (for a field) by the description
// of the object type it refers to, as kubectl shows both.
func (e explainer) description(f field, isField bool) string {
	d := f.schema.Description
	if !isField {
		return d
	}
	t := f.target
	if t.Type == "array" && t.Items != nil {
		inner := e.field(*t.Items)
		if inner.refName != "" && len(inner.target.Properties) > 0 {
			d += "\n" + inner.target.Description
		}
	} else if f.refName != "" && t.Description != "" {
		d += "\n" + t.Description
	}
	return d
}

// enumValues are the values a field's schema allows, if it lists them.
func enumValues(f field) []string {
	var out []string
	for _, v := range f.target.Enum {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// typeName names a field's type as kubectl explain does: string, integer,
// boolean, []Container, map[string]string, the short name of a referenced
// type (ObjectMeta, Quantity), or Object.
func (e explainer) typeName(f field) string {
	t := f.target
	switch {
	case t.Type == "array" && t.Items != nil:
		return "[]" + e.typeName(e.field(*t.Items))
	case t.Type == "object" && t.Additional != nil:
		return "map[string]" + e.typeName(e.field(*t.Additional))
	case t.Type != "" && t.Type != "object":
		return t.Type
	case f.refName != "":
		return f.refName
	}
	return "Object"
}

// refName is a schema's short name: io.k8s.api.core.v1.Container ->
// Container.
func refName(name string) string { return name[strings.LastIndex(name, ".")+1:] }

// wrap fills each line of s into lines of at most 80 columns (indent
// included), as kubectl explain does: words are what single spaces separate
// (so double spaces stay), and a word longer than a line (a URL) stands
// alone.
func wrap(s, indent string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		cur, empty := indent, true
		for _, w := range strings.Split(line, " ") {
			if !empty && len(cur)+1+len(w) > 80 {
				b.WriteString(strings.TrimRight(cur, " ") + "\n")
				cur, empty = indent, true
			}
			if !empty {
				cur += " "
			}
			cur += w
			empty = false
		}
		b.WriteString(cur + "\n")
	}
	return b.String()
}
