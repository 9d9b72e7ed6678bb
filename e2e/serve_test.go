package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"kubeplay/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

func TestKubectl(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, url)
	k := kubectl.Succeeds
	expect := func(out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	expect(k("create", "namespace", "demo"), "namespace/demo created")
	expect(k("-n", "demo", "create", "configmap", "cm1", "--from-literal=a=1"), "configmap/cm1 created")
	expect(k("-n", "demo", "create", "secret", "generic", "s1", "--from-literal=p=x"), "secret/s1 created")
	expect(k("-n", "demo", "create", "deployment", "web", "--image=nginx"), "deployment.apps/web created")
	manifest := `apiVersion: v1
kind: ConfigMap
metadata: {name: cm2, namespace: demo}
data: {k: v1}
`
	expect(kubectl.Stdin(manifest).Succeeds("create", "-f", "-"), "configmap/cm2 created")
	expect(k("-n", "demo", "get", "configmaps"), "cm2")
	expect(k("get", "configmaps", "-A"), "demo")
	expect(k("-n", "demo", "get", "secret", "s1", "-o", "jsonpath={.data.p}"), "eA==")
	expect(k("-n", "demo", "get", "deployment", "web", "-o", "yaml"), "generation: 1")
	got := k("-n", "demo", "get", "configmap", "cm2", "-o", "yaml")
	expect(got, "resourceVersion:")
	expect(kubectl.Stdin(strings.Replace(got, "k: v1", "k: v2", 1)).Succeeds("replace", "-f", "-"), "configmap/cm2 replaced")
	expect(k("-n", "demo", "get", "configmap", "cm2", "-o", "jsonpath={.data.k}"), "v2")
	expect(k("get", "--raw", "/api/v1"), `"kind":"APIResourceList"`)
	expect(k("get", "--raw", "/apis"), `"apps"`)
	expect(k("-n", "demo", "delete", "configmap", "cm1"), `configmap "cm1" deleted`)
	expect(k("-n", "demo", "delete", "secret", "s1"), `secret "s1" deleted`)
	expect(k("-n", "demo", "delete", "deployment", "web"), `deployment.apps "web" deleted`)
	expect(k("delete", "namespace", "demo"), `namespace "demo" deleted`)
	if out := k("get", "namespaces"); strings.Contains(out, "demo") {
		t.Errorf("namespace demo still listed after kubectl delete (which waits):\n%s", out)
	}
	expect(k("get", "namespaces"), "kube-system")
}

func TestServe_PersistsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	var before string
	func() {
		k := e2e.Kubectl(t, e2e.Start(t, dir).URL)
		k.Succeeds("create", "configmap", "keep", "--from-literal=a=1")
		before = k.Succeeds("get", "configmap", "keep", "-o", "jsonpath={.metadata.uid} {.metadata.resourceVersion}")
	}()
	t.Run("restart", func(t *testing.T) {
		after := e2e.Kubectl(t, e2e.Start(t, dir).URL).Succeeds("get", "configmap", "keep", "-o", "jsonpath={.metadata.uid} {.metadata.resourceVersion}")
		if after != before {
			t.Errorf("after restart %q, before %q", after, before)
		}
	})
}

// TestInformer runs a client-go informer (list, then watch through a
// Reflector) and checks it sees creates, updates and deletes in order.
func TestInformer(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: url})
	ctx := t.Context()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	events := make(chan string, 100)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { events <- "add " + o.(*corev1.ConfigMap).Name },
		UpdateFunc: func(_, o any) {
			cm := o.(*corev1.ConfigMap)
			events <- fmt.Sprintf("update %s %s", cm.Name, cm.Data["v"])
		},
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			events <- "delete " + o.(*corev1.ConfigMap).Name
		},
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}

	cms := cs.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"add before", "add live", "update live 2", "delete live"}
	timeout := time.After(e2e.WaitLimit(t))
	for i, w := range want {
		select {
		case got := <-events:
			if got != w {
				t.Fatalf("event %d = %q, want %q", i, got, w)
			}
		case <-timeout:
			t.Fatalf("no event %d (want %q)", i, w)
		}
	}
}
