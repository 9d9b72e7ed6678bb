package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
)

// The objects kubectl's generators make (create deployment|namespace|
// configmap|secret generic, run), as kubectl v1.35 sends them: the same
// fields and labels, and its field managers ("kubectl-create",
// "kubectl-run").

// createGenerated makes the object create's arguments describe.
func (c *Console) createGenerated(ctx context.Context, f flags, args []string, out io.Writer) error {
	kind, args := args[0], args[1:]
	if kind == "secret" {
		if len(args) == 0 || args[0] != "generic" {
			return usageError("the console creates generic secrets: create secret generic NAME --from-literal=key=value")
		}
		args = args[1:]
	}
	if len(args) != 1 {
		return usageError(fmt.Sprintf("create %s needs exactly one name", kind))
	}
	name := args[0]
	var obj map[string]any
	var ref, path string
	ns := f.ns()
	switch kind {
	case "deployment", "deploy":
		if len(f.images) == 0 {
			return usageError("required flag(s) \"image\" not set")
		}
		replicas := 1
		if f.replicasSet {
			replicas = f.replicas
		}
		labels := map[string]any{"app": name}
		obj = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "labels": labels},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
				"strategy": map[string]any{},
				"template": map[string]any{"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": containers(f, "")}}},
			"status": map[string]any{}}
		ref, path = "deployment.apps/"+name, "/apis/apps/v1/namespaces/"+ns+"/deployments"
	case "namespace", "ns":
		obj = map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}, "spec": map[string]any{}, "status": map[string]any{}}
		ref, path = "namespace/"+name, "/api/v1/namespaces"
	case "configmap", "cm", "secret":
		data := map[string]any{}
		for _, kv := range f.fromLiterals {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageError(fmt.Sprintf("invalid literal source %s, expected key=value", kv))
			}
			data[k] = v
		}
		if kind == "secret" {
			obj = map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name}, "stringData": data, "type": "Opaque"}
			ref, path = "secret/"+name, "/api/v1/namespaces/"+ns+"/secrets"
		} else {
			obj = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
			ref, path = "configmap/"+name, "/api/v1/namespaces/"+ns+"/configmaps"
		}
	default:
		return usageError(fmt.Sprintf("the console creates deployment, namespace, configmap and secret generic from flags (or anything with -f): not %q", kind))
	}
	return c.post(ctx, path, "kubectl-create", f, obj, ref, out)
}

// runPod is kubectl run NAME --image=IMAGE: one pod, labelled run=NAME.
func (c *Console) runPod(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	if len(args) != 1 {
		return usageError("run needs exactly one name: run NAME --image=IMAGE")
	}
	if len(f.images) != 1 {
		return usageError("required flag(s) \"image\" not set")
	}
	name := args[0]
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"run": name}},
		"spec":     map[string]any{"containers": containers(f, name), "dnsPolicy": "ClusterFirst", "restartPolicy": "Always"},
		"status":   map[string]any{}}
	return c.post(ctx, "/api/v1/namespaces/"+f.ns()+"/pods", "kubectl-run", f, obj, "pod/"+name, out)
}

// containers are a generated pod template's: one per --image, named name
// or after the image (its last path element, without tag or digest).
func containers(f flags, name string) []any {
	var cs []any
	for _, image := range f.images {
		n := name
		if n == "" {
			n = path.Base(image)
			n, _, _ = strings.Cut(n, "@")
			n, _, _ = strings.Cut(n, ":")
		}
		c := map[string]any{"name": n, "image": image, "resources": map[string]any{}}
		if f.port > 0 {
			c["ports"] = []any{map[string]any{"containerPort": f.port}}
		}
		cs = append(cs, c)
	}
	return cs
}

// post creates obj at path as fieldManager (unless -field-manager says
// otherwise) and prints "<ref> created", as kubectl does.
func (c *Console) post(ctx context.Context, path, fieldManager string, f flags, obj map[string]any, ref string, out io.Writer) error {
	if f.fieldManager != "" {
		fieldManager = f.fieldManager
	}
	body, _ := json.Marshal(obj)
	if _, err := c.request(ctx, "POST", path+query("fieldManager", fieldManager), "application/json", body, ""); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s created\n", ref)
	return nil
}
