package playground_test

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground"
	"kubeplay/store"
)

// An object's history is every version the store keeps, each at the
// revision that wrote it, the deletion last; compaction drops those before
// the horizon but keeps the object as it was then.
func TestSandbox_History(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb := openSandboxWith(t, playground.Options{Store: st, Controllers: playground.Controllers{}.Without(playground.ControllerNames()...)})
	h := sb.Handler()
	const path = "/api/v1/namespaces/default/configmaps"
	rv := func(o map[string]any) int64 {
		n, _ := strconv.ParseInt(o["metadata"].(map[string]any)["resourceVersion"].(string), 10, 64)
		return n
	}
	created := rv(mustDo(t, h, 201, "POST", path, `{"metadata":{"name":"web"},"data":{"v":"1"}}`))
	mustDo(t, h, 201, "POST", path, `{"metadata":{"name":"web2"},"data":{"other":"name"}}`) // shares the key's prefix
	second := rv(mustDo(t, h, 200, "PUT", path+"/web", `{"metadata":{"name":"web"},"data":{"v":"2"}}`))
	other := rv(mustDo(t, h, 200, "PUT", path+"/web2", `{"metadata":{"name":"web2"},"data":{"other":"changed"}}`))
	third := rv(mustDo(t, h, 200, "PUT", path+"/web", `{"metadata":{"name":"web"},"data":{"v":"3"}}`))
	mustDo(t, h, 200, "DELETE", path+"/web", "")
	deleted := rv(mustDo(t, h, 200, "GET", path, "")) // a list is as of the latest revision: the deletion's
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	type version struct {
		rev int64
		v   any // data.v; nil: deleted
	}
	history := func() ([]version, int64) {
		t.Helper()
		revs, horizon, err := sb.History(t.Context(), cm, "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		var vs []version
		for _, r := range revs {
			var v any
			if r.Object != nil {
				v = r.Object["data"].(map[string]any)["v"]
				if rv(r.Object) != r.Revision {
					t.Errorf("revision %d served with resourceVersion %d", r.Revision, rv(r.Object))
				}
			}
			vs = append(vs, version{r.Revision, v})
		}
		return vs, horizon
	}
	got, horizon := history()
	want := []version{{created, "1"}, {second, "2"}, {third, "3"}, {deleted, nil}}
	if horizon != 0 || len(got) != len(want) {
		t.Fatalf("history %v (horizon %d), want %v", got, horizon, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("version %d: %v, want %v", i, got[i], want[i])
		}
	}
	// Compacted in the middle, at a revision that did not write the object:
	// the object as of the horizon comes first.
	if err := st.Compact(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	got, horizon = history()
	want = []version{{second, "2"}, {third, "3"}, {deleted, nil}}
	if horizon != other || len(got) != len(want) {
		t.Fatalf("after compaction: history %v (horizon %d), want %v", got, horizon, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("after compaction, version %d: %v, want %v", i, got[i], want[i])
		}
	}
}
