package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// describe prints an object as kubectl describe does for ConfigMaps and
// Namespaces (with the same requests: events, quotas, limit ranges); other
// kinds get kubectl's header (name, namespace, labels, annotations) and then
// the object's other fields as YAML — a basic describe, not kubectl's.
func (c *Console) describe(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	r, names, err := c.typeAndNames(ctx, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return usageError("the console describes one object: describe TYPE NAME")
	}
	ns := f.ns()
	data, err := c.request(ctx, "GET", r.path(ns, names[0]), "", nil, "")
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	meta, _ := obj["metadata"].(map[string]any)
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "Name:\t%v\n", meta["name"])
	if r.Namespaced {
		fmt.Fprintf(tw, "Namespace:\t%v\n", meta["namespace"])
	}
	describeMap(tw, "Labels:", meta["labels"], "=")
	describeMap(tw, "Annotations:", meta["annotations"], ": ")
	switch {
	case r.Group == "" && r.Kind == "ConfigMap":
		tw.Flush()
		describeConfigMap(obj, out)
		return c.describeEvents(ctx, r, ns, meta, out)
	case r.Group == "" && r.Kind == "Namespace":
		status, _ := obj["status"].(map[string]any)
		fmt.Fprintf(tw, "Status:\t%v\n", status["phase"])
		tw.Flush()
		return c.describeNamespace(ctx, names[0], out)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range []string{"metadata", "apiVersion", "kind"} {
		delete(obj, k)
	}
	if len(obj) == 0 {
		return nil
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	_, err = out.Write(b)
	return err
}

// describeMap prints labels (k=v) or annotations (k: v), sorted, one per
// line.
func describeMap(tw io.Writer, title string, v any, sep string) {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		fmt.Fprintf(tw, "%s\t<none>\n", title)
	}
	for i, k := range keys {
		if i > 0 {
			title = ""
		}
		fmt.Fprintf(tw, "%s\t%s%s%v\n", title, k, sep, m[k])
	}
}

func describeConfigMap(obj map[string]any, out io.Writer) {
	fmt.Fprint(out, "\nData\n====\n")
	data, _ := obj["data"].(map[string]any)
	for _, k := range sortedKeys(data) {
		fmt.Fprintf(out, "%s:\n----\n%v\n\n", k, data[k])
	}
	fmt.Fprint(out, "\nBinaryData\n====\n")
	bin, _ := obj["binaryData"].(map[string]any)
	for _, k := range sortedKeys(bin) {
		s, _ := bin[k].(string)
		b, _ := base64.StdEncoding.DecodeString(s)
		fmt.Fprintf(out, "%s: %d bytes\n", k, len(b))
	}
	fmt.Fprintln(out)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describeEvents lists the events about the object, as kubectl describe
// asks for them.
func (c *Console) describeEvents(ctx context.Context, r resource, ns string, meta map[string]any, out io.Writer) error {
	sel := fmt.Sprintf("involvedObject.name=%v,involvedObject.namespace=%s,involvedObject.kind=%s,involvedObject.uid=%v", meta["name"], ns, r.Kind, meta["uid"])
	var list struct {
		Items []struct {
			Type, Reason, Message string
			Source                struct{ Component string }
		} `json:"items"`
	}
	if err := c.getJSON(ctx, "/api/v1/namespaces/"+ns+"/events?fieldSelector="+url.QueryEscape(sel)+"&limit=500", &list); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		_, err := fmt.Fprintln(out, "Events:  <none>")
		return err
	}
	fmt.Fprintln(out, "Events:")
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  Type\tReason\tFrom\tMessage")
	fmt.Fprintln(tw, "  ----\t------\t----\t-------")
	for _, e := range list.Items {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.Type, e.Reason, e.Source.Component, strings.TrimSpace(e.Message))
	}
	return tw.Flush()
}

// describeNamespace adds the namespace's quotas and limit ranges, as kubectl
// describe does (when there are some: their names only, here).
func (c *Console) describeNamespace(ctx context.Context, ns string, out io.Writer) error {
	for _, q := range []struct{ resource, none, some string }{
		{"resourcequotas", "No resource quota.", "Resource Quotas"},
		{"limitranges", "No LimitRange resource.", "Resource Limits"},
	} {
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := c.getJSON(ctx, "/api/v1/namespaces/"+ns+"/"+q.resource, &list); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			fmt.Fprintf(out, "\n%s\n", q.none)
			continue
		}
		fmt.Fprintf(out, "\n%s\n", q.some)
		for _, it := range list.Items {
			fmt.Fprintf(out, "  Name:  %s\n", nameOf(it))
		}
	}
	return nil
}
