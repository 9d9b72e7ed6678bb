package e2e_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubeplay/e2e"
)

// TestSandboxes_kubectl: kubectl works against a sandbox with the kubeconfig
// the playground API hands out, and the sandbox is not the root's cluster.
func TestSandboxes_kubectl(t *testing.T) {
	dir := t.TempDir()
	url := e2e.Start(t, dir, "--sandbox-max-objects", "-1", "--max-sandboxes", "1").URL
	resp, err := http.Post(url+"/playground/v1/sandboxes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&sb)
	resp.Body.Close()
	if resp.StatusCode != 201 || sb.ID == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, sb)
	}
	resp, err = http.Post(url+"/playground/v1/sandboxes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second sandbox with --max-sandboxes 1: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(dir, "sandboxes", "sandbox-"+sb.ID+".db")); err != nil {
		t.Errorf("the sandbox's database in DIR/sandboxes: %v", err)
	}
	resp, err = http.Get(url + "/playground/v1/sandboxes/" + sb.ID + "/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := e2e.KubectlConfig(t, kubeconfig)
	k := kubectl.Succeeds
	k("create", "configmap", "in-sandbox", "--from-literal=a=b")
	if out := k("get", "configmaps", "-o", "name"); !strings.Contains(out, "configmap/in-sandbox") {
		t.Errorf("get configmaps: %s", out)
	}
	if out := k("api-resources", "--api-group=apps"); !strings.Contains(out, "deployments") {
		t.Errorf("api-resources: %s", out)
	}
	if out := k("version", "-o", "json"); !strings.Contains(out, `"serverVersion"`) {
		t.Errorf("version: %s", out)
	}
	if out := k("explain", "configmap.data"); !strings.Contains(out, "FIELD: data") {
		t.Errorf("explain (OpenAPI under the prefix): %s", out)
	}
	// kubectl get --raw and proxy (without --append-server-path) drop the
	// server URL's path up to 1.33: the sandbox's address has none to drop.
	// Tried with the kubectl installed and, under go tool task, Debian's
	// 1.20 (what apt installs).
	kubectls := map[string]*e2e.KubectlRunner{"kubectl": kubectl}
	if old := os.Getenv("KUBEPLAY_KUBECTL_1_20"); old != "" {
		kubectls["kubectl 1.20"] = kubectl.Binary(old)
	} else {
		t.Log("KUBEPLAY_KUBECTL_1_20 is not set (go tool task test:native sets it): get --raw and proxy tried with the installed kubectl only")
	}
	for name, kubectl := range kubectls {
		if out := kubectl.Succeeds("get", "--raw", "/api/v1/namespaces/default/configmaps/in-sandbox"); !strings.Contains(out, `"name":"in-sandbox"`) {
			t.Errorf("%s get --raw: %s", name, out)
		}
		serving := kubectl.Start("proxy", "--port", "0").Lines(1)[0]
		proxy, ok := strings.CutPrefix(serving, "Starting to serve on ")
		if !ok {
			t.Fatalf("%s proxy: %q", name, serving)
		}
		resp, err := http.Get("http://" + proxy + "/api/v1/namespaces/default/configmaps/in-sandbox")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the configmap through %s proxy: %s", name, resp.Status)
		}
	}
	// The root cluster does not have it.
	if out, err := e2e.Kubectl(t, url).Run("get", "configmap", "in-sandbox", "-n", "default"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the root cluster: (err=%v) %s", err, out)
	}
}

// TestSandboxes_workloads: the simulated controllers make a Deployment,
// its scaling, its rollout, a Job and a cascading delete look as kubectl
// shows them in a cluster (here in the root cluster, where a flag turns
// them on).
func TestSandboxes_workloads(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--simulate-workloads").URL).Flags("-n", "default").Succeeds
	waitPods := func(selector string, want int, phase string) {
		t.Helper()
		deadline := time.Now().Add(e2e.WaitLimit(t))
		for {
			out := k("get", "pods", "-l", selector, "-o", "jsonpath={range .items[*]}{.status.phase}{\"\\n\"}{end}")
			phases := strings.Fields(out)
			if len(phases) == want && !slices.ContainsFunc(phases, func(p string) bool { return p != phase }) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pods %s: %v, want %d %s", selector, phases, want, phase)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	k("create", "deployment", "web", "--image=nginx", "--replicas=3")
	if out := k("rollout", "status", "deployment/web", e2e.TimeoutFlag(t)); !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Errorf("rollout status: %s", out)
	}
	waitPods("app=web", 3, "Running")
	rs := k("get", "replicasets", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name} {.items[0].metadata.ownerReferences[0].kind} {.items[0].metadata.labels.pod-template-hash}")
	if f := strings.Fields(rs); len(f) != 3 || f[0] != "web-"+f[2] || f[1] != "Deployment" {
		t.Errorf("the ReplicaSet: %s", rs)
	}
	pod := k("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.ownerReferences[0].kind} {.items[0].metadata.name}")
	if f := strings.Fields(rs); !strings.HasPrefix(pod, "ReplicaSet "+f[0]+"-") {
		t.Errorf("a pod: %s", pod)
	}

	k("scale", "deployment", "web", "--replicas=1")
	k("rollout", "status", "deployment/web", e2e.TimeoutFlag(t))
	waitPods("app=web", 1, "Running")

	k("set", "image", "deployment/web", "nginx=nginx:1.29")
	if out := k("rollout", "status", "deployment/web", e2e.TimeoutFlag(t)); !strings.Contains(out, "successfully rolled out") {
		t.Errorf("rollout status after set image: %s", out)
	}
	waitPods("app=web", 1, "Running")
	if out := k("get", "replicasets", "-l", "app=web", "-o", "jsonpath={range .items[*]}{.spec.replicas} {end}"); out != "0 1 " && out != "1 0 " {
		t.Errorf("replicas of the two ReplicaSets: %q", out)
	}
	if out := k("rollout", "history", "deployment/web"); !strings.Contains(out, "\n2 ") {
		t.Errorf("rollout history: %s", out)
	}
	k("rollout", "undo", "deployment/web")
	k("rollout", "status", "deployment/web", e2e.TimeoutFlag(t))
	if out := k("get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); out != "nginx" {
		t.Errorf("image after undo: %q", out)
	}
	if out := k("rollout", "history", "deployment/web"); !strings.Contains(out, "\n2 ") || !strings.Contains(out, "\n3 ") || strings.Contains(out, "\n1 ") {
		t.Errorf("rollout history after undo (revision 1 becomes 3): %s", out)
	}

	k("delete", "deployment", "web")
	waitPods("app=web", 0, "")
	if out := k("get", "replicasets", "-o", "name"); strings.Contains(out, "web") {
		t.Errorf("ReplicaSets after the cascading delete: %s", out)
	}

	k("create", "job", "once", "--image=busybox")
	if out := k("wait", "--for=condition=complete", "job/once", e2e.TimeoutFlag(t)); !strings.Contains(out, "condition met") {
		t.Errorf("wait for the job: %s", out)
	}
	waitPods("job-name=once", 1, "Succeeded")
}

// TestSandboxes_tlsAndTokens: over HTTPS with anonymous access off, the
// kubeconfig of a sandbox trusts the server's certificate and carries the
// token its request did, and kubectl works with it as is.
func TestSandboxes_tlsAndTokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("admin-token,admin,admin-uid,\"system:masters\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := e2e.Start(t, dir, "--tls", "--anonymous", "deny", "--token-auth-file", tokens).URL
	client := tlsClient(t, dir)
	resp, err := client.Post(url+"/playground/v1/sandboxes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&sb)
	resp.Body.Close()
	req, _ := http.NewRequest("GET", url+"/playground/v1/sandboxes/"+sb.ID+"/kubeconfig", nil)
	req.Header.Set("Authorization", "Bearer admin-token")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	kc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(kc), "certificate-authority-data: ") || !strings.Contains(string(kc), `token: "admin-token"`) {
		t.Fatalf("kubeconfig:\n%s", kc)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kubeconfig, kc, 0o600)
	if out, err := e2e.KubectlConfig(t, kubeconfig).Run("auth", "whoami"); err != nil || !strings.Contains(out, "admin") {
		t.Errorf("whoami in the sandbox: (err=%v) %s", err, out)
	}
	// Without the token, the sandbox answers 401 as the root does.
	resp, err = client.Get(url + "/sandboxes/" + sb.ID + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous in the sandbox: %d", resp.StatusCode)
	}
}

// TestSandboxes_hosted: with --playground-admin-token-file, the playground
// API needs that token, and a sandbox's kubeconfig carries the sandbox's
// own token, with which kubectl works there and nowhere else.
func TestSandboxes_hosted(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte("the-admin-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := e2e.Start(t, dir, "--tls", "--playground-admin-token-file", tokenFile).URL
	client := tlsClient(t, dir)
	do := func(method, path, token string, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
		return b
	}
	do("POST", "/playground/v1/sandboxes", "", http.StatusUnauthorized)
	var a, b struct{ ID, Token string }
	json.Unmarshal(do("POST", "/playground/v1/sandboxes", "the-admin-token", http.StatusCreated), &a)
	json.Unmarshal(do("POST", "/playground/v1/sandboxes", "the-admin-token", http.StatusCreated), &b)
	kc := do("GET", "/playground/v1/sandboxes/"+a.ID+"/kubeconfig", "the-admin-token", http.StatusOK)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kubeconfig, kc, 0o600)
	kubectl := e2e.KubectlConfig(t, kubeconfig)
	if out, err := kubectl.Run("auth", "whoami"); err != nil || !strings.Contains(out, "kubeplay:sandbox-admin") {
		t.Errorf("whoami in the sandbox: (err=%v) %s", err, out)
	}
	if out, err := kubectl.Run("--server", url+"/sandboxes/"+b.ID, "get", "namespaces"); err == nil || !strings.Contains(out, "You must be logged in to the server") {
		t.Errorf("the token in another sandbox: (err=%v) %s", err, out)
	}
	do("GET", "/sandboxes/"+a.ID+"/api/v1/namespaces", "", http.StatusUnauthorized)
	do("GET", "/playground/v1/sandboxes/"+a.ID, a.Token, http.StatusUnauthorized)
}

// TestSandboxes_clientGo: client-go works against a sandbox with the
// kubeconfig the playground API hands out: discovery, typed writes and a
// watch that sees the simulated controllers roll a Deployment out.
func TestSandboxes_clientGo(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	resp, err := http.Post(url+"/playground/v1/sandboxes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&sb)
	resp.Body.Close()
	resp, err = http.Get(url + "/playground/v1/sandboxes/" + sb.ID + "/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	groups, err := cs.Discovery().ServerGroups()
	if err != nil || !slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "apps" }) {
		t.Fatalf("discovery: %v", err)
	}
	ctx := t.Context()
	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	d, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.AppsV1().Deployments("default").Watch(ctx, metav1.ListOptions{ResourceVersion: d.ResourceVersion, FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timeout := time.After(e2e.WaitLimit(t))
	for {
		select {
		case ev := <-w.ResultChan():
			if d, ok := ev.Object.(*appsv1.Deployment); ok && d.Status.AvailableReplicas == 2 && d.Status.ObservedGeneration == d.Generation {
				return
			}
		case <-timeout:
			t.Fatal("the Deployment did not roll out")
		}
	}
}

// tlsClient trusts the certificate of the server started with --tls in dir.
func tlsClient(t *testing.T, dir string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestSandboxes_kubectlTop: kubectl top reads the simulated metrics-server
// of a cluster with simulated workloads, as on a cluster with
// metrics-server.
func TestSandboxes_kubectlTop(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--simulate-workloads").URL).Succeeds
	k("create", "deployment", "web", "--image=nginx", "--replicas=2")
	k("set", "resources", "deployment/web", "--requests=cpu=200m,memory=128Mi")
	k("rollout", "status", "deployment/web", e2e.TimeoutFlag(t))
	if out := k("get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "jsonpath={.status.conditions[0].type}={.status.conditions[0].status}"); out != "Available=True" {
		t.Errorf("the metrics APIService: %s", out)
	}
	nodes := k("top", "node")
	if lines := strings.Split(strings.TrimSpace(nodes), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(lines[0], "CPU(cores)") || !strings.HasPrefix(lines[1], "kubeplay-control-plane ") {
		t.Errorf("kubectl top node:\n%s", nodes)
	}
	// Rolled out, the old ReplicaSet's pods may still be terminating: they
	// are read too, as metrics-server reads them until they stop.
	pods := k("top", "pod", "-A")
	if !strings.HasPrefix(pods, "NAMESPACE ") || strings.Count(pods, "\ndefault ") < 2 {
		t.Errorf("kubectl top pod -A:\n%s", pods)
	}
	name := strings.TrimPrefix(strings.TrimSpace(k("get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o", "name")), "pod/")
	name, _, _ = strings.Cut(name, "\n")
	k("annotate", "pod", name, "simulated.kubeplay.dev/cpu-usage=150m", "simulated.kubeplay.dev/memory-usage=96Mi")
	containers := k("top", "pod", name, "--containers")
	if f := strings.Fields(strings.Split(strings.TrimSpace(containers), "\n")[1]); len(f) != 4 || f[0] != name || f[1] != "nginx" || f[2] != "150m" || f[3] != "96Mi" {
		t.Errorf("kubectl top pod --containers:\n%s", containers)
	}
	if out, err := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL).Run("top", "node"); err == nil || !strings.Contains(out, "Metrics API not available") {
		t.Errorf("kubectl top node without simulated workloads: %v\n%s", err, out)
	}
}
