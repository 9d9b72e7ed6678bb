package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// tableAccept asks for a Table, as kubectl get does.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// newTabWriter aligns columns as kubectl's printers do.
func newTabWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 10, 4, 3, ' ', 0)
}

type table struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	ColumnDefinitions []struct {
		Name     string `json:"name"`
		Priority int    `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any `json:"cells"`
		Object struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		} `json:"object"`
	} `json:"rows"`
}

func (c *Console) get(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	r, names, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	ns := f.ns()
	if f.allNamespaces {
		ns = ""
	}
	if len(names) > 1 {
		return usageError("the console gets one name at a time")
	}
	name := ""
	if len(names) == 1 {
		name = names[0]
	}
	switch f.output {
	case "", "wide":
		return c.getTable(ctx, r, ns, name, f, out)
	case "yaml", "json", "name":
		data, err := c.request(ctx, "GET", r.path(ns, name)+query("labelSelector", f.selector), "", nil, "")
		if err != nil {
			return err
		}
		return printObjects(data, name == "", f.output, f.showManagedFields, r, out)
	}
	return usageError(fmt.Sprintf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", f.output))
}

func (c *Console) getTable(ctx context.Context, r resource, ns, name string, f flags, out io.Writer) error {
	path := r.path(ns, name) + query("labelSelector", f.selector)
	data, err := c.request(ctx, "GET", path, "", nil, tableAccept)
	if err != nil {
		return err
	}
	var t table
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	withNS := r.Namespaced && ns == ""
	if len(t.Rows) == 0 && !f.watch {
		if r.Namespaced && ns != "" {
			fmt.Fprintf(out, "No resources found in %s namespace.\n", ns)
		} else {
			fmt.Fprintln(out, "No resources found")
		}
		return nil
	}
	tw := newTabWriter(out)
	cols := printTable(tw, t, f.output == "wide", withNS, true)
	if err := tw.Flush(); err != nil {
		return err
	}
	if !f.watch {
		return nil
	}
	// As kubectl get -w: the list, then a row per change from its version.
	wq := "?watch=1&resourceVersion=" + t.Metadata.ResourceVersion
	if name != "" {
		wq += "&fieldSelector=metadata.name%3D" + name
		path = r.path(ns, "")
	}
	if f.selector != "" {
		wq += "&" + strings.TrimPrefix(query("labelSelector", f.selector), "?")
	}
	res, err := c.do(ctx, "GET", strings.SplitN(path, "?", 2)[0]+wq, "", nil, tableAccept)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		body, _ := io.ReadAll(res.Body)
		return decodeStatus(res.StatusCode, body)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Object table  `json:"object"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type == "BOOKMARK" || ev.Type == "ERROR" {
			continue
		}
		ev.Object.ColumnDefinitions = cols // events' Tables carry rows only
		tw := newTabWriter(out)
		printTable(tw, ev.Object, f.output == "wide", withNS, false)
		tw.Flush()
	}
	return sc.Err()
}

// printTable prints t's rows (and header) and returns the column
// definitions it used.
func printTable(tw io.Writer, t table, wide, withNS, header bool) (cols []struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
}) {
	cols = t.ColumnDefinitions
	if header {
		var h []string
		if withNS {
			h = append(h, "NAMESPACE")
		}
		for _, c := range cols {
			if c.Priority == 0 || wide {
				h = append(h, strings.ToUpper(c.Name))
			}
		}
		fmt.Fprintln(tw, strings.Join(h, "\t"))
	}
	for _, row := range t.Rows {
		var cells []string
		if withNS {
			cells = append(cells, row.Object.Metadata.Namespace)
		}
		for i, c := range cols {
			if i < len(row.Cells) && (c.Priority == 0 || wide) {
				cells = append(cells, cell(row.Cells[i]))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return cols
}

func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "<none>"
	case string:
		if v == "" {
			return "<none>"
		}
		return v
	case float64:
		return fmt.Sprint(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// printObjects prints an object, or a list as kubectl does (a v1 List of
// its items, each with its apiVersion and kind), as yaml, json or names;
// without managedFields unless asked, as kubectl.
func printObjects(data []byte, isList bool, format string, managedFields bool, r resource, out io.Writer) error {
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	var items []any
	if isList {
		items, _ = obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				m["apiVersion"], m["kind"] = r.apiVersion(), r.Kind
			}
		}
		obj = map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}}
	} else {
		items = []any{obj}
	}
	if !managedFields {
		for _, it := range items {
			m, _ := it.(map[string]any)
			if meta, ok := m["metadata"].(map[string]any); ok {
				delete(meta, "managedFields")
			}
		}
	}
	switch format {
	case "name":
		var names []string
		for _, it := range items {
			names = append(names, r.ref(nameOf(it)))
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(out, n)
		}
		return nil
	case "json":
		b, err := json.MarshalIndent(obj, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

func nameOf(obj any) string {
	m, _ := obj.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
