package controller_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "kubeplay/examples/envtest/api/v1"
	"kubeplay/examples/envtest/controller"
)

var scheme = runtime.NewScheme()

func TestMain(m *testing.M) {
	logf.SetLogger(logr.Discard())
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := examplev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// envtest would look in /usr/local/kubebuilder/bin: say what to do.
		os.Stderr.WriteString("set KUBEBUILDER_ASSETS: go tool task test:envtest (in the repository's root) writes kubeplay's\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// testEnv is a started envtest environment with the manager running the
// Widget controller.
type testEnv struct {
	env   *envtest.Environment
	admin client.WithWatch
}

// startEnvironment starts an environment (stopped when the test ends) with
// the CRD installed and the manager running.
func startEnvironment(t testing.TB) *testEnv {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the environment: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stopped sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		stopped.Wait()
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the environment: %v", err)
		}
	})
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Several managers, one per environment, may run in the process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&controller.WidgetReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	stopped.Add(1)
	go func() {
		defer stopped.Done()
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	admin, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{env: env, admin: admin}
}

// TestEnvironment runs the suite in one environment.
func TestEnvironment(t *testing.T) {
	runSuite(t, startEnvironment(t))
}

// TestEnvironment_EightInParallel starts eight environments at once, each
// running the suite.
func TestEnvironment_EightInParallel(t *testing.T) {
	// In a group, so that the test lasts as long as the eight do.
	t.Run("all", func(t *testing.T) {
		for i := range 8 {
			t.Run(string(rune('a'+i)), func(t *testing.T) {
				t.Parallel()
				runSuite(t, startEnvironment(t))
			})
		}
	})
}

func runSuite(t *testing.T, e *testEnv) {
	t.Run("Widget", func(t *testing.T) { testWidget(t, e) })
	t.Run("NamespaceDeletion", func(t *testing.T) { testNamespaceDeletion(t, e) })
	t.Run("RBAC", func(t *testing.T) { testRBAC(t, e) })
	t.Run("Kubectl", func(t *testing.T) { testKubectl(t, e) })
}

// testKubectl: envtest's kubectl (KUBEBUILDER_ASSETS/kubectl) reaches the
// API server as the default user.
func testKubectl(t *testing.T, e *testEnv) {
	stdout, stderr, err := e.env.ControlPlane.KubeCtl().Run("get", "customresourcedefinitions", "-o", "name")
	if err != nil {
		b, _ := io.ReadAll(stderr)
		t.Fatalf("kubectl: %v: %s", err, b)
	}
	b, _ := io.ReadAll(stdout)
	if got, want := string(b), "customresourcedefinition.apiextensions.k8s.io/widgets.example.kubeplay.dev\n"; got != want {
		t.Errorf("kubectl get customresourcedefinitions -o name:\n%s\nwant:\n%s", got, want)
	}
}

// testWidget: the controller makes the Widget's ConfigMap, owned by it; on
// deletion, its finalizer leaves a tombstone, and the garbage collector
// deletes the ConfigMap.
func testWidget(t *testing.T, e *testEnv) {
	ctx := t.Context()
	ns := newNamespace(t, e)
	w := &examplev1.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w1"},
		Spec:       examplev1.WidgetSpec{Data: map[string]string{"colour": "blue"}},
	}
	if err := e.admin.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	cmKey := client.ObjectKey{Namespace: ns, Name: controller.ConfigMapName("w1")}
	await(t, e.admin, &corev1.ConfigMapList{}, cmKey, "the widget's ConfigMap, owned by it", func(o client.Object) bool {
		if o == nil {
			return false
		}
		owner := metav1.GetControllerOf(o)
		return owner != nil && owner.UID == w.UID && o.(*corev1.ConfigMap).Data["colour"] == "blue"
	})
	await(t, e.admin, &examplev1.WidgetList{}, client.ObjectKeyFromObject(w), "the widget with its finalizer and status", func(o client.Object) bool {
		return o != nil && len(o.GetFinalizers()) == 1 && o.GetFinalizers()[0] == controller.Finalizer &&
			o.(*examplev1.Widget).Status.ConfigMap == cmKey.Name
	})

	if err := e.admin.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	await(t, e.admin, &examplev1.WidgetList{}, client.ObjectKeyFromObject(w), "the widget gone", isGone)
	var tombstone corev1.ConfigMap
	if err := e.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: controller.TombstoneName("w1")}, &tombstone); err != nil {
		t.Fatalf("the finalizer's tombstone: %v", err)
	}
	if tombstone.Data["uid"] != string(w.UID) {
		t.Errorf("tombstone data = %v, want the widget's uid %s", tombstone.Data, w.UID)
	}
	await(t, e.admin, &corev1.ConfigMapList{}, cmKey, "the widget's ConfigMap garbage collected", isGone)
}

// testNamespaceDeletion: a deleted namespace, with a Widget (and its
// finalizer) and a ConfigMap in it, is emptied and goes.
func testNamespaceDeletion(t *testing.T, e *testEnv) {
	ctx := t.Context()
	ns := newNamespace(t, e)
	w := &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w2"}}
	if err := e.admin.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	await(t, e.admin, &corev1.ConfigMapList{}, client.ObjectKey{Namespace: ns, Name: controller.ConfigMapName("w2")}, "the widget's ConfigMap", func(o client.Object) bool { return o != nil })
	if err := e.admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	await(t, e.admin, &corev1.NamespaceList{}, client.ObjectKey{Name: ns}, "the namespace gone", isGone)
}

// testRBAC: a user added through envtest's AddUser (a client certificate)
// may do what a RoleBinding grants, and nothing more.
func testRBAC(t *testing.T, e *testEnv) {
	ctx := t.Context()
	ns := newNamespace(t, e)
	user, err := e.env.AddUser(envtest.User{Name: "alice", Groups: []string{"widget-viewers"}}, &rest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := client.New(user.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = alice.List(ctx, &examplev1.WidgetList{}, client.InNamespace(ns))
	want := `widgets.example.kubeplay.dev is forbidden: User "alice" cannot list resource "widgets" in API group "example.kubeplay.dev" in the namespace "` + ns + `"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("alice lists widgets before any grant: %v, want Forbidden: %s", err, want)
	}

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-viewer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{examplev1.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-viewers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "widget-viewers"}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := e.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.List(ctx, &examplev1.WidgetList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("alice lists widgets with the grant: %v", err)
	}
	err = alice.Create(ctx, &examplev1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w3"}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice creates a widget: %v, want Forbidden", err)
	}
}

// newNamespace creates a namespace of a name of its own.
func newNamespace(t *testing.T, e *testEnv) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "widgets-"}}
	if err := e.admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func isGone(o client.Object) bool { return o == nil }

// await watches the object key in list's collection until cond holds for
// it (nil: the object does not exist). The deadline only bounds a failure.
func await(t *testing.T, c client.WithWatch, list client.ObjectList, key client.ObjectKey, what string, cond func(client.Object) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	opts := []client.ListOption{client.MatchingFields{"metadata.name": key.Name}}
	if key.Namespace != "" {
		opts = append(opts, client.InNamespace(key.Namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var current client.Object
	if len(items) > 0 {
		current = items[0].(client.Object)
	}
	if cond(current) {
		return
	}
	w, err := c.Watch(ctx, list, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}})...)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			current = ev.Object.(client.Object)
		case watch.Deleted:
			current = nil
		case watch.Error:
			t.Fatalf("waiting for %s: %v", what, apierrors.FromObject(ev.Object))
		default:
			continue
		}
		if cond(current) {
			return
		}
	}
	t.Fatalf("waiting for %s: %v; last seen: %+v", what, ctx.Err(), current)
}
