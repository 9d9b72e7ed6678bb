package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

type schema struct {
	Description string              `json:"description"`
	Type        string              `json:"type"`
	Format      string              `json:"format"`
	Ref         string              `json:"$ref"`
	AllOf       []schema            `json:"allOf"`
	Items       *schema             `json:"items"`
	Additional  *schema             `json:"additionalProperties"`
	Properties  map[string]schema   `json:"properties"`
	Required    []string            `json:"required"`
	GVK         []map[string]string `json:"x-kubernetes-group-version-kind"`
}

// explain prints the OpenAPI v3 description of a type or one of its fields
// (TYPE.field.field), with its fields one level deep.
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
	schemas := doc.Components.Schemas
	resolve := func(s schema) schema {
		for s.Ref != "" || len(s.AllOf) == 1 && s.Properties == nil {
			desc := s.Description
			if s.Ref == "" {
				s = s.AllOf[0]
			}
			if s.Ref != "" {
				s = schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
			}
			if desc != "" {
				s.Description = desc
			}
		}
		return s
	}
	var cur schema
	found := false
	for _, s := range schemas {
		for _, gvk := range s.GVK {
			if gvk["group"] == r.Group && gvk["version"] == r.Version && gvk["kind"] == r.Kind {
				cur, found = s, true
			}
		}
	}
	if !found {
		return usageError(fmt.Sprintf("couldn't find resource for %q", r.apiVersion()+", Kind="+r.Kind))
	}
	path := parts[1:]
	for i, field := range path {
		cur = resolve(cur)
		for cur.Type == "array" && cur.Items != nil {
			cur = resolve(*cur.Items)
		}
		next, ok := cur.Properties[field]
		if !ok {
			return usageError(fmt.Sprintf("field %q does not exist", strings.Join(path[:i+1], ".")))
		}
		cur = next
	}
	cur = resolve(cur)
	if r.Group != "" {
		fmt.Fprintf(out, "GROUP:      %s\n", r.Group)
	}
	fmt.Fprintf(out, "KIND:       %s\nVERSION:    %s\n\n", r.Kind, r.Version)
	if len(path) > 0 {
		fmt.Fprintf(out, "FIELD: %s <%s>\n\n", path[len(path)-1], typeName(cur, resolve))
	}
	fmt.Fprintf(out, "DESCRIPTION:\n%s\n", indent(cur.Description, "    "))
	body := cur
	for body.Type == "array" && body.Items != nil {
		body = resolve(*body.Items)
	}
	if len(body.Properties) == 0 {
		return nil
	}
	fmt.Fprint(out, "\nFIELDS:\n")
	names := make([]string, 0, len(body.Properties))
	for n := range body.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := resolve(body.Properties[n])
		req := ""
		if contains(body.Required, n) {
			req = " -required-"
		}
		fmt.Fprintf(out, "  %s\t<%s>%s\n%s\n\n", n, typeName(p, resolve), req, indent(firstParagraph(p.Description), "    "))
	}
	return nil
}

// typeName names a schema's type as kubectl explain does: string, integer,
// boolean, []Item, map[string]string, or the Go type name of an object.
func typeName(s schema, resolve func(schema) schema) string {
	switch {
	case s.Type == "array" && s.Items != nil:
		return "[]" + typeName(resolve(*s.Items), resolve)
	case s.Type == "object" && s.Additional != nil:
		return "map[string]" + typeName(resolve(*s.Additional), resolve)
	case s.Type != "" && s.Type != "object":
		return s.Type
	}
	return "Object"
}

func firstParagraph(s string) string {
	p, _, _ := strings.Cut(s, "\n\n")
	return p
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
