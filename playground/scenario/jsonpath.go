package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// evalPath evaluates a JSONPath expression of the subset kubectl's
// -o jsonpath users write most — {.a.b}, {.items[0]}, {.items[*].x},
// {.conditions[?(@.type=="Ready")].status} (the field a path too:
// ?(@.metadata.name=="x")), and keys with dots quoted as
// {.metadata.labels['app.kubernetes.io/name']} — on a decoded JSON value.
// A path through [*] or a filter yields a list.
func evalPath(doc any, expr string) (any, error) {
	p := strings.TrimSpace(expr)
	if !strings.HasPrefix(p, "{") || !strings.HasSuffix(p, "}") {
		return nil, fmt.Errorf("jsonpath %q: want {.path}", expr)
	}
	p = strings.TrimPrefix(p[1:len(p)-1], "$")
	values, many := []any{doc}, false
	for p != "" {
		var next []any
		switch {
		case strings.HasPrefix(p, "."):
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			key := p[:end]
			p = p[end:]
			for _, v := range values {
				if m, ok := v.(map[string]any); ok {
					if x, ok := m[key]; ok {
						next = append(next, x)
					}
				}
			}
		case strings.HasPrefix(p, "["):
			end := strings.Index(p, "]")
			if end < 0 {
				return nil, fmt.Errorf("jsonpath %q: unclosed [", expr)
			}
			sel := p[1:end]
			p = p[end+1:]
			for _, v := range values {
				items, err := selectIn(v, sel)
				if err != nil {
					return nil, fmt.Errorf("jsonpath %q: %w", expr, err)
				}
				next = append(next, items...)
			}
			if sel == "*" || strings.HasPrefix(sel, "?") {
				many = true
			}
		default:
			return nil, fmt.Errorf("jsonpath %q: unexpected %q", expr, p)
		}
		values = next
	}
	if many {
		if values == nil {
			values = []any{}
		}
		return values, nil
	}
	if len(values) == 0 {
		return nil, errNotFound
	}
	return values[0], nil
}

var errNotFound = fmt.Errorf("not found")

// selectIn applies one [...] selector to v.
func selectIn(v any, sel string) ([]any, error) {
	switch {
	case sel == "*":
		switch x := v.(type) {
		case []any:
			return x, nil
		case map[string]any:
			var out []any
			for _, e := range x {
				out = append(out, e)
			}
			return out, nil
		}
		return nil, nil
	case strings.HasPrefix(sel, "'") || strings.HasPrefix(sel, `"`):
		key := strings.Trim(sel, `'"`)
		if m, ok := v.(map[string]any); ok {
			if x, ok := m[key]; ok {
				return []any{x}, nil
			}
		}
		return nil, nil
	case strings.HasPrefix(sel, "?(@.") && strings.HasSuffix(sel, ")"):
		field, want, ok := strings.Cut(sel[4:len(sel)-1], "==")
		if !ok {
			return nil, fmt.Errorf("filter %q: want ?(@.field==value)", sel)
		}
		want = strings.Trim(strings.TrimSpace(want), `'"`)
		field = strings.TrimSpace(field)
		list, _ := v.([]any)
		var out []any
		for _, e := range list {
			if x, err := evalPath(e, "{."+field+"}"); err == nil && text(x) == want {
				out = append(out, e)
			}
		}
		return out, nil
	}
	i, err := strconv.Atoi(sel)
	if err != nil {
		return nil, fmt.Errorf("selector [%s]", sel)
	}
	list, _ := v.([]any)
	if i < 0 {
		i += len(list)
	}
	if i < 0 || i >= len(list) {
		return nil, nil
	}
	return []any{list[i]}, nil
}

// text is v as kubectl -o jsonpath prints a scalar (a string unquoted),
// JSON for anything else.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
