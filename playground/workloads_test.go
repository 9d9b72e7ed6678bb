package playground_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/store"
)

const deploymentJSON = `{"metadata":{"name":"web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
	"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`

func items(t testing.TB, h http.Handler, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range mustDo(t, h, 200, "GET", path, "")["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestWorkloads_deployment(t *testing.T) {
	h := openSandbox(t).Handler()
	d := mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", deploymentJSON)
	var pods []map[string]any
	waitFor(t, "two running pods", func() bool {
		pods = items(t, h, "/api/v1/namespaces/default/pods")
		running := 0
		for _, p := range pods {
			if p["status"].(map[string]any)["phase"] == "Running" {
				running++
			}
		}
		return running == 2 && len(pods) == 2
	})
	rss := items(t, h, "/apis/apps/v1/namespaces/default/replicasets")
	if len(rss) != 1 {
		t.Fatalf("%d ReplicaSets", len(rss))
	}
	rs := rss[0]
	md := rs["metadata"].(map[string]any)
	hash := md["labels"].(map[string]any)["pod-template-hash"].(string)
	wantRef := `[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"Deployment","name":"web","uid":"` + uidOf(d) + `"}]`
	if md["name"] != "web-"+hash || jsonOf(md["ownerReferences"]) != wantRef {
		t.Errorf("ReplicaSet %v owned by %s", md["name"], jsonOf(md["ownerReferences"]))
	}
	if sel := jsonOf(rs["spec"].(map[string]any)["selector"]); sel != `{"matchLabels":{"app":"web","pod-template-hash":"`+hash+`"}}` {
		t.Errorf("ReplicaSet selector %s", sel)
	}
	for _, p := range pods {
		pm := p["metadata"].(map[string]any)
		wantRef := `[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"web-` + hash + `","uid":"` + uidOf(rs) + `"}]`
		if !strings.HasPrefix(pm["name"].(string), "web-"+hash+"-") || jsonOf(pm["ownerReferences"]) != wantRef ||
			jsonOf(pm["labels"]) != `{"app":"web","pod-template-hash":"`+hash+`"}` {
			t.Errorf("pod %v: labels %s, owners %s", pm["name"], jsonOf(pm["labels"]), jsonOf(pm["ownerReferences"]))
		}
		if conds := jsonOf(p["status"].(map[string]any)["conditions"]); !strings.Contains(conds, `"status":"True","type":"Ready"`) {
			t.Errorf("pod conditions %s", conds)
		}
	}
	if rev := md["annotations"].(map[string]any)["deployment.kubernetes.io/revision"]; rev != "1" {
		t.Errorf("ReplicaSet revision %v", rev)
	}
	var got map[string]any
	waitFor(t, "the Deployment's status", func() bool {
		got = mustDo(t, h, 200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", "")
		st := got["status"].(map[string]any)
		return st["availableReplicas"] == 2.0 && st["updatedReplicas"] == 2.0 && strings.Contains(jsonOf(st["conditions"]), `"reason":"NewReplicaSetAvailable"`)
	})
	// As kube-controller-manager does, through /status: no new generation.
	if gm := got["metadata"].(map[string]any); jsonOf(gm["annotations"]) != `{"deployment.kubernetes.io/revision":"1"}` || gm["generation"] != 1.0 {
		t.Errorf("Deployment annotations %s, generation %v", jsonOf(gm["annotations"]), gm["generation"])
	}

	mustDo(t, h, 200, "DELETE", "/apis/apps/v1/namespaces/default/deployments/web", "")
	waitFor(t, "the cascading delete", func() bool {
		return len(items(t, h, "/api/v1/namespaces/default/pods")) == 0 && len(items(t, h, "/apis/apps/v1/namespaces/default/replicasets")) == 0
	})
}

func TestWorkloads_job(t *testing.T) {
	h := openSandbox(t).Handler()
	mustDo(t, h, 201, "POST", "/apis/batch/v1/namespaces/default/jobs", `{"metadata":{"name":"once"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`)
	waitFor(t, "the Job to complete", func() bool {
		st := mustDo(t, h, 200, "GET", "/apis/batch/v1/namespaces/default/jobs/once", "")["status"].(map[string]any)
		return st["succeeded"] == 1.0 && st["completionTime"] != nil && strings.Contains(jsonOf(st["conditions"]), `"status":"True","type":"Complete"`)
	})
	pods := items(t, h, "/api/v1/namespaces/default/pods?labelSelector=job-name%3Donce")
	if len(pods) != 1 || pods[0]["status"].(map[string]any)["phase"] != "Succeeded" {
		t.Errorf("the Job's pods: %s", jsonOf(pods))
	}
}

func TestWorkloads_disabled(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := playground.Open(t.Context(), playground.Options{Store: st, Controllers: playground.Controllers{}.Without("deployment", "kubeadm")})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	mustDo(t, sb.Handler(), 201, "POST", "/apis/apps/v1/namespaces/default/deployments", deploymentJSON)
	waitIdle(t, sb)
	if rss := items(t, sb.Handler(), "/apis/apps/v1/namespaces/default/replicasets"); len(rss) != 0 {
		t.Errorf("%d ReplicaSets with the deployment controller off", len(rss))
	}
}

// rolledOut reports whether the Deployment web has replicas pods of its
// current template running and says so in its status.
func rolledOut(t *testing.T, h http.Handler, replicas int, image string) bool {
	t.Helper()
	d := mustDo(t, h, 200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", "")
	st, _ := d["status"].(map[string]any)
	want := float64(replicas)
	if st == nil || st["observedGeneration"] != d["metadata"].(map[string]any)["generation"] || st["replicas"] != want ||
		st["updatedReplicas"] != want || st["availableReplicas"] != want || st["readyReplicas"] != want ||
		!strings.Contains(jsonOf(st["conditions"]), `"reason":"NewReplicaSetAvailable"`) {
		return false
	}
	running := 0
	for _, p := range items(t, h, "/api/v1/namespaces/default/pods") {
		if !strings.Contains(jsonOf(p["spec"]), `"image":"`+image+`"`) || p["metadata"].(map[string]any)["deletionTimestamp"] != nil {
			return false
		}
		if p["status"].(map[string]any)["phase"] == "Running" {
			running++
		}
	}
	return running == replicas
}

func TestWorkloads_deploymentRollsOutThenIdles(t *testing.T) {
	sb := openCluster(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2`, `"replicas":3`, 1))
	waitFor(t, "three running pods and an available Deployment", func() bool { return rolledOut(t, h, 3, "nginx") })
	waitIdle(t, sb)
	assertStaysIdle(t, sb)

	// A new template: a new ReplicaSet takes over, the old one is scaled
	// to zero and stays; then all is quiet again.
	d := mustDo(t, h, 200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", "")
	d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:2"
	mustDo(t, h, 200, "PUT", "/apis/apps/v1/namespaces/default/deployments/web", jsonOf(d))
	waitFor(t, "the new template rolled out", func() bool { return rolledOut(t, h, 3, "nginx:2") })
	if rss := items(t, h, "/apis/apps/v1/namespaces/default/replicasets"); len(rss) != 2 {
		t.Errorf("%d ReplicaSets after a rollout", len(rss))
	}
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}
