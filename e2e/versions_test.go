package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"kubeplay/e2e"
)

// TestKubectl_Autoscale runs `kubectl autoscale`, which writes an
// autoscaling/v1 HorizontalPodAutoscaler, and reads it back through both
// versions, comparing with what the oracle answered
// (testdata/oracle/kubectl/autoscale.json, recorded with -oracle-kubeconfig):
// the object stored once and converted, managedFields in v1.
func TestKubectl_Autoscale(t *testing.T) {
	golden := filepath.Join("testdata", "oracle", "kubectl", "autoscale.json")
	objects := func(url string) map[string]any {
		kubectlFor(t, url).Succeeds("create", "namespace", "kversions")
		kubectlFor(t, url).Succeeds("-n", "kversions", "create", "deployment", "web", "--image=nginx")
		kubectlFor(t, url).Succeeds("-n", "kversions", "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60")
		out := map[string]any{}
		for _, v := range []string{"v1", "v2"} {
			var obj map[string]any
			if err := json.Unmarshal([]byte(kubectlFor(t, url).Succeeds("get", "--raw", "/apis/autoscaling/"+v+"/namespaces/kversions/horizontalpodautoscalers/web")), &obj); err != nil {
				t.Fatal(err)
			}
			out[v] = normalizeGenerated(obj, "")
		}
		return out
	}
	want := jsonGolden(t, golden, objects)
	got := objects(e2e.Start(t, t.TempDir()).URL)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("kubectl autoscale:\n got: %s\nwant: %s", g, w)
	}
}
