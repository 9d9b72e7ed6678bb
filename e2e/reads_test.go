package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"

	"kubeplay/e2e"
)

// requestLog records the URLs a client sends.
type requestLog struct {
	mu   sync.Mutex
	urls []string
	next http.RoundTripper
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.urls = append(l.urls, r.URL.RequestURI())
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *requestLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.urls)
}

func loggedClient(t *testing.T, url string) (*kubernetes.Clientset, *requestLog) {
	t.Helper()
	log := &requestLog{}
	cfg := &rest.Config{Host: url, WrapTransport: func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log }}
	return kubernetes.NewForConfigOrDie(cfg), log
}

func createConfigMaps(t *testing.T, cs *kubernetes.Clientset, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// runReflector runs a Reflector over the config maps of ns until the test
// ends and returns its store.
func runReflector(t *testing.T, cs *kubernetes.Clientset, ns string) (cache.Store, *cache.Reflector) {
	t.Helper()
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
	st := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewReflectorWithOptions(lw, &corev1.ConfigMap{}, st, cache.ReflectorOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.RunWithContext(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return st, r
}

// waitFor polls cond until it holds; the timeout only bounds a broken run.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, e2e.WaitLimit(t), true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func storeNames(st cache.Store) []string {
	names := st.ListKeys()
	slices.Sort(names)
	return names
}

// TestReflector runs client-go's Reflector in both of its modes: the
// streaming list (WatchList: one watch with sendInitialEvents, ended by the
// initial-events-end bookmark) and list-then-watch with bookmarks.
func TestReflector(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	for _, tc := range []struct {
		watchList bool
		first     []string // what the first request asks for
	}{
		{true, []string{"watch=true", "sendInitialEvents=true", "resourceVersionMatch=NotOlderThan", "allowWatchBookmarks=true"}},
		{false, []string{"limit=500", "resourceVersion=0"}},
	} {
		t.Run(fmt.Sprintf("WatchListClient=%v", tc.watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: url})
			reflectorClient, log := loggedClient(t, url)
			ns := fmt.Sprintf("reflector-%v", tc.watchList)
			if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			createConfigMaps(t, cs, ns, "a", "b", "c")
			st, r := runReflector(t, reflectorClient, ns)
			want := []string{ns + "/a", ns + "/b", ns + "/c"}
			waitFor(t, "the initial state", func() bool { return slices.Equal(storeNames(st), want) })
			createConfigMaps(t, cs, ns, "d")
			if err := cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want = []string{ns + "/b", ns + "/c", ns + "/d"}
			waitFor(t, "the changes", func() bool { return slices.Equal(storeNames(st), want) })
			if r.LastSyncResourceVersion() == "" {
				t.Error("no LastSyncResourceVersion")
			}
			urls := log.seen()
			for _, p := range tc.first {
				if !strings.Contains(urls[0], p) {
					t.Errorf("first request %s lacks %s", urls[0], p)
				}
			}
			// Either way the reflector ends up watching with bookmarks, from
			// the revision it synced at, and never lists again.
			var lists int
			for _, u := range urls {
				if !strings.Contains(u, "watch=true") {
					lists++
				} else if !strings.Contains(u, "allowWatchBookmarks=true") {
					t.Errorf("watch without bookmarks: %s", u)
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.watchList]; lists != want {
				t.Errorf("%d list requests, want %d: %v", lists, want, urls)
			}
		})
	}
}

// TestPager lists with client-go's pager, two objects a page, while objects
// change between pages: the pages form one snapshot.
func TestPager(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	cs, _ := loggedClient(t, url)
	createConfigMaps(t, cs, "default", "c1", "c2", "c3", "c4", "c5", "c6", "c7")
	cms := cs.CoreV1().ConfigMaps("default")
	var pages []string
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		list, err := cms.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		pages = append(pages, fmt.Sprintf("%s:%d:%v", list.ResourceVersion, len(list.Items), list.RemainingItemCount != nil))
		// Change the collection after every page.
		n := len(pages)
		createConfigMaps(t, cs, "default", fmt.Sprintf("c0-%d", n))
		if err := cms.Delete(ctx, fmt.Sprintf("c%d", 8-n), metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		return list, nil
	})
	p.PageSize = 2
	var names []string
	if err := p.EachListItem(t.Context(), metav1.ListOptions{}, func(o runtime.Object) error {
		names = append(names, o.(*corev1.ConfigMap).Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// kube-root-ca.crt is not there: kubeplay runs no root-CA publisher.
	if want := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"}; !slices.Equal(names, want) {
		t.Errorf("listed %v, want the snapshot %v", names, want)
	}
	rv := strings.Split(pages[0], ":")[0]
	wantPages := []string{rv + ":2:true", rv + ":2:true", rv + ":2:true", rv + ":1:false"}
	if !slices.Equal(pages, wantPages) {
		t.Errorf("pages (resourceVersion:items:remainingItemCount) %v, want %v", pages, wantPages)
	}
}

// TestKubectl_Reads: kubectl get with selectors, chunking, jsonpath and watches.
func TestKubectl_Reads(t *testing.T) {
	kubectl := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	k := kubectl.Succeeds
	k("create", "namespace", "r")
	manifest := func(name, labels string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: r, labels: {%s}}\n", name, labels)
	}
	for _, cm := range [][2]string{{"web-1", "app: web"}, {"web-2", "app: web"}, {"db-1", "app: db"}, {"other", ""}} {
		kubectl.Stdin(manifest(cm[0], cm[1])).Succeeds("create", "-f", "-")
	}
	names := func(out string) []string {
		var ns []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			ns = append(ns, strings.Fields(l)[0])
		}
		return ns
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-l", "app=web"}, []string{"web-1", "web-2"}},
		{[]string{"-l", "app in (db,web),app!=web"}, []string{"db-1"}},
		{[]string{"-l", "!app"}, []string{"other"}},
		{[]string{"--field-selector", "metadata.name!=other"}, []string{"db-1", "web-1", "web-2"}},
		{[]string{"--field-selector", "metadata.name=web-2", "-l", "app"}, []string{"web-2"}},
		{[]string{"--chunk-size=1"}, []string{"db-1", "other", "web-1", "web-2"}},
		{[]string{"--chunk-size=3", "-l", "app"}, []string{"db-1", "web-1", "web-2"}},
	} {
		if got := names(k(append([]string{"-n", "r", "get", "configmaps"}, tc.args...)...)); !slices.Equal(got, tc.want) {
			t.Errorf("kubectl get configmaps %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	if got := k("-n", "r", "get", "configmaps", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}"); got != "web-1 web-2" {
		t.Errorf("jsonpath: %q", got)
	}
	if out := kubectl.Fails("-n", "r", "get", "configmaps", "--field-selector", "data.x=y"); !strings.Contains(out, `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`) {
		t.Errorf("unsupported field selector: %s", out)
	}

	watch := kubectl.Start("-n", "r", "get", "configmaps", "-l", "app=web", "-w")
	// -v=6 logs each request once answered: --watch-only, which prints
	// nothing until a change, must have opened its watch before the change.
	only := kubectl.Start("-v=6", "-n", "r", "get", "configmaps", "-l", "app=web", "--watch-only", "-o", "name")
	waitFor(t, "kubectl get -w to list", func() bool { return strings.Contains(watch.Output(), "web-2") })
	waitFor(t, "kubectl get --watch-only to watch", func() bool { return strings.Contains(only.Output(), "&watch=true 200 OK") })
	kubectl.Stdin(manifest("db-1", "app: web")).Succeeds("replace", "-f", "-")
	waitFor(t, "the watches to see db-1 enter the selection", func() bool {
		return strings.Contains(watch.Output(), "db-1") && strings.Contains(only.Output(), "configmap/db-1")
	})
	if got := only.Output(); strings.Contains(got, "web-1") {
		t.Errorf("--watch-only printed the initial state:\n%s", got)
	}
}
