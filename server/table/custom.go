package table

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Column is one of a CRD's additionalPrinterColumns.
type Column struct {
	Name, Type, Format, Description, JSONPath string
	Priority                                  int32
}

// custom prints custom objects with their CRD's columns.
type custom struct {
	columns []metav1.TableColumnDefinition
	paths   [][]pathStep
}

// Custom returns the printer of a custom resource: Name, then the CRD's
// additionalPrinterColumns, or Name and Age without them, as kube-apiserver
// prints custom objects.
func Custom(columns []Column) Printer {
	if len(columns) == 0 {
		columns = []Column{{Name: "Age", Type: "date", Description: creationTimestampDescription, JSONPath: ".metadata.creationTimestamp"}}
	}
	p := custom{columns: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name", Description: nameDescription}}}
	for _, c := range columns {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		p.columns = append(p.columns, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority})
		p.paths = append(p.paths, parsePath(c.JSONPath))
	}
	return p
}

func (p custom) Columns() []metav1.TableColumnDefinition { return p.columns }

func (p custom) Conditions(map[string]any) []metav1.TableRowCondition { return nil }

func (p custom) Cells(o map[string]any, now time.Time) []any {
	cells := []any{obj(o).name()}
	for i, path := range p.paths {
		cells = append(cells, cell(p.columns[i+1].Type, lookup(o, path), now))
	}
	return cells
}

// cell converts a column's value to its type; a value that does not fit is
// left empty (null), as the real server leaves it.
func cell(typ string, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	switch typ {
	case "date":
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil
		}
		return age(t, now)
	case "integer":
		switch n := v.(type) {
		case json.Number:
			if i, err := n.Int64(); err == nil {
				return i
			}
		case int64:
			return n
		case float64:
			return int64(n)
		}
		return nil
	case "number":
		switch n := v.(type) {
		case json.Number:
			return n
		case int64, float64:
			return n
		}
		return nil
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		return nil
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// pathStep is one field name, or one list index when index >= 0.
type pathStep struct {
	field string
	index int
}

// parsePath reads the simple JSONPaths printer columns use
// (".status.conditions[0].type"); a field name may escape dots ("\.").
func parsePath(p string) []pathStep {
	p = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p), "{"), "}")
	p = strings.TrimPrefix(p, ".")
	var steps []pathStep
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			steps = append(steps, pathStep{field: cur.String(), index: -1})
			cur.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case c == '.':
			flush()
		case c == '[':
			flush()
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return steps
			}
			n, err := strconv.Atoi(p[i+1 : i+end])
			if err != nil {
				return nil
			}
			steps = append(steps, pathStep{index: n})
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return steps
}

func lookup(v any, path []pathStep) any {
	for _, s := range path {
		if s.index >= 0 {
			l, ok := v.([]any)
			if !ok || s.index >= len(l) {
				return nil
			}
			v = l[s.index]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[s.field]
	}
	return v
}
