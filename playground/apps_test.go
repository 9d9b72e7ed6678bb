package playground_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// eventMessages are the messages of the Events about the object kind/name
// in ns, oldest first, from the reason given.
func eventMessages(t testing.TB, h http.Handler, ns, kind, name, reason string) []string {
	t.Helper()
	evs := items(t, h, "/api/v1/namespaces/"+ns+"/events?fieldSelector=involvedObject.kind%3D"+kind+",involvedObject.name%3D"+name+",reason%3D"+reason)
	slices.SortStableFunc(evs, func(a, b map[string]any) int {
		return strings.Compare(a["metadata"].(map[string]any)["name"].(string), b["metadata"].(map[string]any)["name"].(string))
	})
	var out []string
	for _, e := range evs {
		out = append(out, e["message"].(string))
	}
	return out
}

// mergePatch sends a JSON merge patch.
func mergePatch(t testing.TB, h http.Handler, path, body string) {
	t.Helper()
	req := httptest.NewRequest("PATCH", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("PATCH %s: %d %s", path, rec.Code, rec.Body)
	}
}

func podsOwnedBy(t testing.TB, h http.Handler, ns, uid string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range items(t, h, "/api/v1/namespaces/"+ns+"/pods") {
		if p["metadata"].(map[string]any)["deletionTimestamp"] == nil && strings.Contains(jsonOf(p["metadata"].(map[string]any)["ownerReferences"]), uid) {
			out = append(out, p)
		}
	}
	return out
}

func status(t testing.TB, h http.Handler, path string) map[string]any {
	t.Helper()
	st, _ := mustDo(t, h, 200, "GET", path, "")["status"].(map[string]any)
	return st
}

// A ReplicaSet adopts the orphans its selector matches, makes the pods it
// lacks, releases a pod relabelled out of its selector, and says what it
// did in Events.
func TestReplicaSet_adoptsReleasesAndRecordsEvents(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"orphan","labels":{"app":"rs"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	rs := mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/replicasets", `{"metadata":{"name":"rs"},"spec":{"replicas":2,
		"selector":{"matchLabels":{"app":"rs"}},"template":{"metadata":{"labels":{"app":"rs"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	uid := uidOf(rs)
	waitFor(t, "two ready pods", func() bool {
		st := status(t, h, "/apis/apps/v1/namespaces/default/replicasets/rs")
		return st["availableReplicas"] == 2.0 && st["readyReplicas"] == 2.0 && st["replicas"] == 2.0 && st["terminatingReplicas"] == 0.0
	})
	pods := podsOwnedBy(t, h, "default", uid)
	if len(pods) != 2 {
		t.Fatalf("%d pods owned", len(pods))
	}
	orphan := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/pods/orphan", "")
	wantRef := `[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"rs","uid":"` + uid + `"}]`
	if got := jsonOf(orphan["metadata"].(map[string]any)["ownerReferences"]); got != wantRef {
		t.Errorf("the orphan's owners: %s", got)
	}
	var made string
	for _, p := range pods {
		if name := p["metadata"].(map[string]any)["name"].(string); name != "orphan" {
			made = name
		}
	}
	if got := eventMessages(t, h, "default", "ReplicaSet", "rs", "SuccessfulCreate"); jsonOf(got) != jsonOf([]string{"Created pod: " + made}) {
		t.Errorf("SuccessfulCreate events %q", got)
	}

	mergePatch(t, h, "/api/v1/namespaces/default/pods/orphan", `{"metadata":{"labels":{"app":"other"}}}`)
	waitFor(t, "the relabelled pod released and replaced", func() bool {
		p := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/pods/orphan", "")
		return p["metadata"].(map[string]any)["ownerReferences"] == nil && len(podsOwnedBy(t, h, "default", uid)) == 2
	})

	mergePatch(t, h, "/apis/apps/v1/namespaces/default/replicasets/rs", `{"spec":{"replicas":1}}`)
	waitFor(t, "one pod deleted", func() bool {
		return len(podsOwnedBy(t, h, "default", uid)) == 1 && len(eventMessages(t, h, "default", "ReplicaSet", "rs", "SuccessfulDelete")) == 1
	})
	if got := eventMessages(t, h, "default", "ReplicaSet", "rs", "SuccessfulDelete")[0]; !strings.HasPrefix(got, "Deleted pod: rs-") {
		t.Errorf("SuccessfulDelete event %q", got)
	}
	waitIdle(t, sb)
}

// A ReplicaSet whose pods cannot be made says why in its ReplicaFailure
// condition, which goes once they can.
func TestReplicaSet_replicaFailure(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("nopods", "", []string{"pods"}, map[string]any{"validations": validations("false")}))
	mustDo(t, h, 201, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
		`{"metadata":{"name":"nopods"},"spec":{"policyName":"nopods","validationActions":["Deny"]}}`)
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/replicasets", `{"metadata":{"name":"rs"},"spec":{"replicas":1,
		"selector":{"matchLabels":{"app":"rs"}},"template":{"metadata":{"labels":{"app":"rs"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	var cond map[string]any
	waitFor(t, "the ReplicaFailure condition", func() bool {
		conds, _ := status(t, h, "/apis/apps/v1/namespaces/default/replicasets/rs")["conditions"].([]any)
		if len(conds) == 1 {
			cond = conds[0].(map[string]any)
		}
		return cond != nil
	})
	if cond["type"] != "ReplicaFailure" || cond["status"] != "True" || cond["reason"] != "FailedCreate" || !strings.Contains(cond["message"].(string), "ValidatingAdmissionPolicy 'nopods' with binding 'nopods' denied request") {
		t.Errorf("condition %s", jsonOf(cond))
	}
	// One per try: each names the pod it tried to make.
	if got := eventMessages(t, h, "default", "ReplicaSet", "rs", "FailedCreate"); len(got) == 0 || !strings.HasPrefix(got[0], "Error creating: pods \"rs-") {
		t.Errorf("FailedCreate events %q", got)
	}
	mustDo(t, h, 200, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/nopods", "")
	waitFor(t, "the condition gone", func() bool {
		st := status(t, h, "/apis/apps/v1/namespaces/default/replicasets/rs")
		return st["conditions"] == nil && st["availableReplicas"] == 1.0
	})
}

// A ReplicationController keeps its pods as a ReplicaSet does, and reports
// them in its status (which has no terminatingReplicas).
func TestReplicationController(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	rc := mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/replicationcontrollers", `{"metadata":{"name":"rc"},"spec":{"replicas":2,
		"selector":{"app":"rc"},"template":{"metadata":{"labels":{"app":"rc"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	waitFor(t, "two available pods", func() bool {
		st := status(t, h, "/api/v1/namespaces/default/replicationcontrollers/rc")
		return jsonOf(st) == `{"availableReplicas":2,"fullyLabeledReplicas":2,"observedGeneration":1,"readyReplicas":2,"replicas":2}`
	})
	pods := podsOwnedBy(t, h, "default", uidOf(rc))
	if len(pods) != 2 || !strings.Contains(jsonOf(pods[0]["metadata"]), `"kind":"ReplicationController","name":"rc"`) || !strings.HasPrefix(pods[0]["metadata"].(map[string]any)["name"].(string), "rc-") {
		t.Errorf("pods %s", jsonOf(pods))
	}
	if got := eventMessages(t, h, "default", "ReplicationController", "rc", "SuccessfulCreate"); len(got) != 2 {
		t.Errorf("SuccessfulCreate events %q", got)
	}
	mergePatch(t, h, "/api/v1/namespaces/default/replicationcontrollers/rc/scale", `{"spec":{"replicas":0}}`)
	waitFor(t, "no pods", func() bool {
		return len(podsOwnedBy(t, h, "default", uidOf(rc))) == 0 && status(t, h, "/api/v1/namespaces/default/replicationcontrollers/rc")["replicas"] == 0.0
	})
	waitIdle(t, sb)
}

func patchImage(t *testing.T, h http.Handler, name, image string) {
	t.Helper()
	mergePatch(t, h, "/apis/apps/v1/namespaces/default/deployments/"+name,
		`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"`+image+`"}]}}}}`)
}

// rsNames are the Deployment's ReplicaSets by revision: their names and
// replicas.
func replicaSetsByRevision(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rs := range items(t, h, "/apis/apps/v1/namespaces/default/replicasets") {
		md := rs["metadata"].(map[string]any)
		out[md["annotations"].(map[string]any)["deployment.kubernetes.io/revision"].(string)] = fmt.Sprintf("%s=%v", md["name"], rs["spec"].(map[string]any)["replicas"])
	}
	return out
}

// A rolling update goes within maxSurge and maxUnavailable, step by step
// as the new pods become available; the ScalingReplicaSet events tell it.
func TestDeployment_rollingUpdateSteps(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	d := strings.Replace(deploymentJSON, `"replicas":2,`, `"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},`, 1)
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", d)
	waitFor(t, "the first rollout", func() bool { return rolledOut(t, h, 3, "nginx") })
	first := replicaSetsByRevision(t, h)["1"]
	first = first[:strings.Index(first, "=")]
	patchImage(t, h, "web", "nginx:2")
	waitFor(t, "the second rollout", func() bool { return rolledOut(t, h, 3, "nginx:2") })
	second := replicaSetsByRevision(t, h)["2"]
	second = second[:strings.Index(second, "=")]
	want := []string{
		"Scaled up replica set " + first + " from 0 to 3",
		"Scaled up replica set " + second + " from 0 to 1",
		"Scaled down replica set " + first + " from 3 to 2",
		"Scaled up replica set " + second + " from 1 to 2",
		"Scaled down replica set " + first + " from 2 to 1",
		"Scaled up replica set " + second + " from 2 to 3",
		"Scaled down replica set " + first + " from 1 to 0",
	}
	if got := eventMessages(t, h, "default", "Deployment", "web", "ScalingReplicaSet"); jsonOf(got) != jsonOf(want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	st := status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")
	if conds := jsonOf(st["conditions"]); !strings.Contains(conds, `"message":"ReplicaSet \"`+second+`\" has successfully progressed.","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"`) ||
		!strings.Contains(conds, `"message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"`) {
		t.Errorf("conditions %s", conds)
	}
	waitIdle(t, sb)
}

// Recreate scales the old ReplicaSet to zero and waits for its pods to go
// before the new one is made.
func TestDeployment_recreate(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2,`, `"replicas":2,"strategy":{"type":"Recreate"},`, 1))
	waitFor(t, "the first rollout", func() bool { return rolledOut(t, h, 2, "nginx") })
	patchImage(t, h, "web", "nginx:2")
	waitFor(t, "the second rollout", func() bool { return rolledOut(t, h, 2, "nginx:2") })
	revs := replicaSetsByRevision(t, h)
	first, second := strings.TrimSuffix(revs["1"], "=0"), strings.TrimSuffix(revs["2"], "=2")
	want := []string{
		"Scaled up replica set " + first + " from 0 to 2",
		"Scaled down replica set " + first + " from 2 to 0",
		"Scaled up replica set " + second + " from 0 to 2",
	}
	if got := eventMessages(t, h, "default", "Deployment", "web", "ScalingReplicaSet"); jsonOf(got) != jsonOf(want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// A rollout undo (kubectl's: the old template put back) makes the old
// ReplicaSet the newest revision again; revisionHistoryLimit bounds the
// old ReplicaSets kept.
func TestDeployment_undoAndHistoryLimit(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2,`, `"replicas":2,"revisionHistoryLimit":1,`, 1))
	waitFor(t, "revision 1", func() bool { return rolledOut(t, h, 2, "nginx") })
	patchImage(t, h, "web", "nginx:2")
	waitFor(t, "revision 2", func() bool { return rolledOut(t, h, 2, "nginx:2") })
	patchImage(t, h, "web", "nginx")
	waitFor(t, "revision 3, the first template", func() bool { return rolledOut(t, h, 2, "nginx") })
	revs := replicaSetsByRevision(t, h)
	if len(revs) != 2 || !strings.HasSuffix(revs["3"], "=2") || !strings.HasSuffix(revs["2"], "=0") {
		t.Errorf("ReplicaSets by revision %v", revs)
	}
	rs := items(t, h, "/apis/apps/v1/namespaces/default/replicasets?labelSelector=pod-template-hash%3D"+strings.TrimPrefix(strings.TrimSuffix(revs["3"], "=2"), "web-"))[0]
	if h := rs["metadata"].(map[string]any)["annotations"].(map[string]any)["deployment.kubernetes.io/revision-history"]; h != "1" {
		t.Errorf("revision history %v", h)
	}
	patchImage(t, h, "web", "nginx:3")
	waitFor(t, "revision 4, and one old ReplicaSet kept", func() bool {
		revs := replicaSetsByRevision(t, h)
		return rolledOut(t, h, 2, "nginx:3") && len(revs) == 2 && revs["3"] != "" && revs["4"] != ""
	})
	if a := mustDo(t, h, 200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", "")["metadata"].(map[string]any)["annotations"]; jsonOf(a) != `{"deployment.kubernetes.io/revision":"4"}` {
		t.Errorf("annotations %s", jsonOf(a))
	}
}

// A paused Deployment makes no new ReplicaSet for a new template and says
// it is paused; resumed, it rolls out.
func TestDeployment_paused(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", deploymentJSON)
	waitFor(t, "the first rollout", func() bool { return rolledOut(t, h, 2, "nginx") })
	mergePatch(t, h, "/apis/apps/v1/namespaces/default/deployments/web", `{"spec":{"paused":true}}`)
	patchImage(t, h, "web", "nginx:2")
	waitFor(t, "the paused condition", func() bool {
		return strings.Contains(jsonOf(status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")["conditions"]),
			`"message":"Deployment is paused","reason":"DeploymentPaused","status":"Unknown","type":"Progressing"`)
	})
	waitIdle(t, sb)
	if n := len(items(t, h, "/apis/apps/v1/namespaces/default/replicasets")); n != 1 {
		t.Errorf("%d ReplicaSets while paused", n)
	}
	mergePatch(t, h, "/apis/apps/v1/namespaces/default/deployments/web", `{"spec":{"paused":false}}`)
	waitFor(t, "the rollout once resumed", func() bool { return rolledOut(t, h, 2, "nginx:2") })
}

// A Deployment whose pods never become ready exceeds its progress deadline
// on the sandbox clock, and then rests.
func TestDeployment_progressDeadline(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("kubelet", "kubeadm")})
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2,`, `"replicas":2,"progressDeadlineSeconds":30,`, 1))
	waitFor(t, "the pods", func() bool {
		return status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")["replicas"] == 2.0
	})
	sb.AdvanceClock(31 * time.Second)
	waitFor(t, "the deadline exceeded", func() bool {
		return strings.Contains(jsonOf(status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")["conditions"]),
			`has timed out progressing.","reason":"ProgressDeadlineExceeded","status":"False","type":"Progressing"`)
	})
	st := status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")
	if st["unavailableReplicas"] != 2.0 || st["availableReplicas"] != nil || st["updatedReplicas"] != 2.0 {
		t.Errorf("status %s", jsonOf(st))
	}
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}

// minReadySeconds: pods count as available once ready that long, on the
// sandbox clock.
func TestDeployment_minReadySeconds(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2,`, `"replicas":2,"minReadySeconds":3600,"progressDeadlineSeconds":7200,`, 1))
	waitFor(t, "ready pods", func() bool {
		return status(t, h, "/apis/apps/v1/namespaces/default/deployments/web")["readyReplicas"] == 2.0
	})
	if st := status(t, h, "/apis/apps/v1/namespaces/default/deployments/web"); st["availableReplicas"] != nil || st["unavailableReplicas"] != 2.0 {
		t.Errorf("status before minReadySeconds %s", jsonOf(st))
	}
	sb.AdvanceClock(time.Hour)
	waitFor(t, "available pods", func() bool { return rolledOut(t, h, 2, "nginx") })
}

const statefulSetJSON = `{"metadata":{"name":"db"},"spec":{"replicas":3,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
	"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}},
	"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`

// statefulPods are the StatefulSet db's pods: name to revision label.
func statefulPods(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range items(t, h, "/api/v1/namespaces/default/pods") {
		md := p["metadata"].(map[string]any)
		if md["deletionTimestamp"] == nil && p["status"].(map[string]any)["phase"] == "Running" {
			out[md["name"].(string)] = md["labels"].(map[string]any)["controller-revision-hash"].(string)
		}
	}
	return out
}

// A StatefulSet makes its pods one by one in order, each with its claim,
// scales down from the highest ordinal, and rolls a new template from the
// highest ordinal down to its partition.
func TestStatefulSet_orderedPodsClaimsAndRollingUpdate(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/statefulsets", statefulSetJSON)
	path := "/apis/apps/v1/namespaces/default/statefulsets/db"
	waitFor(t, "three ready pods", func() bool {
		st := status(t, h, path)
		return st["readyReplicas"] == 3.0 && st["currentReplicas"] == 3.0 && st["availableReplicas"] == 3.0
	})
	st := status(t, h, path)
	rev1 := st["updateRevision"].(string)
	if st["currentRevision"] != rev1 || !strings.HasPrefix(rev1, "db-") || st["collisionCount"] != 0.0 || st["observedGeneration"] != 1.0 {
		t.Errorf("status %s", jsonOf(st))
	}
	want := []string{
		"Create Claim data-db-0 Pod db-0 in StatefulSet db success", "create Pod db-0 in StatefulSet db successful",
		"Create Claim data-db-1 Pod db-1 in StatefulSet db success", "create Pod db-1 in StatefulSet db successful",
		"Create Claim data-db-2 Pod db-2 in StatefulSet db success", "create Pod db-2 in StatefulSet db successful"}
	for i := range want {
		want[i] = strings.ToUpper(want[i][:1]) + want[i][1:]
	}
	if got := eventMessages(t, h, "default", "StatefulSet", "db", "SuccessfulCreate"); jsonOf(got) != jsonOf(want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	p := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/pods/db-1", "")
	if l := jsonOf(p["metadata"].(map[string]any)["labels"]); l != `{"app":"db","apps.kubernetes.io/pod-index":"1","controller-revision-hash":"`+rev1+`","statefulset.kubernetes.io/pod-name":"db-1"}` {
		t.Errorf("labels %s", l)
	}
	if spec := p["spec"].(map[string]any); spec["hostname"] != "db-1" || spec["subdomain"] != "db" ||
		!strings.Contains(jsonOf(spec["volumes"]), `{"name":"data","persistentVolumeClaim":{"claimName":"data-db-1"}}`) {
		t.Errorf("spec %s", jsonOf(spec))
	}
	pvc := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/data-db-2", "")
	if jsonOf(pvc["metadata"].(map[string]any)["labels"]) != `{"app":"db"}` {
		t.Errorf("claim %s", jsonOf(pvc["metadata"]))
	}
	revs := items(t, h, "/apis/apps/v1/namespaces/default/controllerrevisions")
	if len(revs) != 1 || revs[0]["metadata"].(map[string]any)["name"] != rev1 || revs[0]["revision"] != 1.0 {
		t.Errorf("revisions %s", jsonOf(revs))
	}

	// A new template above partition 1: db-2 then db-1 are replaced.
	mergePatch(t, h, path, `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}},"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`)
	var rev2 string
	waitFor(t, "db-1 and db-2 updated", func() bool {
		st := status(t, h, path)
		rev2, _ = st["updateRevision"].(string)
		pods := statefulPods(t, h)
		return rev2 != rev1 && st["updatedReplicas"] == 2.0 && st["readyReplicas"] == 3.0 && len(pods) == 3 && pods["db-0"] == rev1 && pods["db-1"] == rev2 && pods["db-2"] == rev2
	})
	if st := status(t, h, path); st["currentRevision"] != rev1 || st["currentReplicas"] != 1.0 {
		t.Errorf("status within the partition %s", jsonOf(st))
	}
	del := eventMessages(t, h, "default", "StatefulSet", "db", "SuccessfulDelete")
	if jsonOf(del) != jsonOf([]string{"Delete Pod db-2 in StatefulSet db successful", "Delete Pod db-1 in StatefulSet db successful"}) {
		t.Errorf("delete events %q", del)
	}
	mergePatch(t, h, path, `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
	waitFor(t, "all updated and current", func() bool {
		st := status(t, h, path)
		return st["currentRevision"] == rev2 && st["currentReplicas"] == 3.0 && statefulPods(t, h)["db-0"] == rev2
	})

	// Scaling down goes from the highest ordinal; the claims stay.
	mergePatch(t, h, path+"/scale", `{"spec":{"replicas":1}}`)
	waitFor(t, "one pod", func() bool {
		return status(t, h, path)["replicas"] == 1.0 && len(statefulPods(t, h)) == 1 && statefulPods(t, h)["db-0"] != ""
	})
	// The deletions repeat those of the update: counted on the same Events.
	for _, e := range items(t, h, "/api/v1/namespaces/default/events?fieldSelector=reason%3DSuccessfulDelete") {
		if msg := e["message"].(string); msg != "Delete Pod db-0 in StatefulSet db successful" && e["count"] != 2.0 {
			t.Errorf("%q counted %v", msg, e["count"])
		}
	}
	if n := len(items(t, h, "/api/v1/namespaces/default/persistentvolumeclaims")); n != 3 {
		t.Errorf("%d claims after scaling down", n)
	}
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}

// A DaemonSet runs one pod on each node whose taints it tolerates, pinned
// there by node affinity, and rolls a new template node by node.
func TestDaemonSet_podPerNodeAndRollingUpdate(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	// The three simulated workers, once registered and ready (without the
	// not-ready taint): one dedicated to something else, one
	// unschedulable; the control plane's node is tainted for it alone.
	const n1, n2, n3 = "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3"
	waitNodes(t, sb, n1, n2, n3, "kubeplay-control-plane")
	mergePatch(t, h, "/api/v1/nodes/"+n2, `{"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}}`)
	mergePatch(t, h, "/api/v1/nodes/"+n3, `{"spec":{"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]}}`)
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/daemonsets", `{"metadata":{"name":"agent"},"spec":{"selector":{"matchLabels":{"app":"agent"}},
		"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"c","image":"agent"}]}}}}`)
	path := "/apis/apps/v1/namespaces/default/daemonsets/agent"
	waitFor(t, "two available pods", func() bool {
		st := status(t, h, path)
		return st["numberAvailable"] == 2.0 && st["desiredNumberScheduled"] == 2.0 && st["updatedNumberScheduled"] == 2.0
	})
	if st := status(t, h, path); jsonOf(st) != `{"currentNumberScheduled":2,"desiredNumberScheduled":2,"numberAvailable":2,"numberMisscheduled":0,"numberReady":2,"observedGeneration":1,"updatedNumberScheduled":2}` {
		t.Errorf("status %s", jsonOf(st))
	}
	revs := items(t, h, "/apis/apps/v1/namespaces/default/controllerrevisions")
	if len(revs) != 1 {
		t.Fatalf("revisions %s", jsonOf(revs))
	}
	hash := revs[0]["metadata"].(map[string]any)["labels"].(map[string]any)["controller-revision-hash"].(string)
	nodes := map[string]bool{}
	for _, p := range items(t, h, "/api/v1/namespaces/default/pods") {
		spec := p["spec"].(map[string]any)
		terms := jsonOf(spec["affinity"])
		node := strings.TrimSuffix(strings.TrimPrefix(terms, `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["`), `"]}]}]}}}`)
		nodes[node] = true
		if !strings.Contains(jsonOf(spec["tolerations"]), `{"effect":"NoSchedule","key":"node.kubernetes.io/unschedulable","operator":"Exists"}`) ||
			p["metadata"].(map[string]any)["labels"].(map[string]any)["controller-revision-hash"] != hash {
			t.Errorf("pod %s", jsonOf(p))
		}
	}
	if jsonOf(nodes) != `{"`+n1+`":true,"`+n3+`":true}` {
		t.Errorf("pods on nodes %v", nodes)
	}

	mergePatch(t, h, path, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"agent:2"}]}}}}`)
	waitFor(t, "the new template on both nodes", func() bool {
		st := status(t, h, path)
		pods := items(t, h, "/api/v1/namespaces/default/pods")
		return st["observedGeneration"] == 2.0 && st["updatedNumberScheduled"] == 2.0 && st["numberAvailable"] == 2.0 && len(pods) == 2 &&
			!strings.Contains(jsonOf(pods), `"image":"agent"`)
	})
	if revs := items(t, h, "/apis/apps/v1/namespaces/default/controllerrevisions"); len(revs) != 2 {
		t.Errorf("%d revisions", len(revs))
	}
	if got := eventMessages(t, h, "default", "DaemonSet", "agent", "SuccessfulDelete"); len(got) != 2 {
		t.Errorf("delete events %q", got)
	}

	// A node tainted NoExecute loses its pod.
	mergePatch(t, h, "/api/v1/nodes/"+n1, `{"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoExecute"}]}}`)
	waitFor(t, "one pod", func() bool {
		st := status(t, h, path)
		return st["desiredNumberScheduled"] == 1.0 && st["currentNumberScheduled"] == 1.0 && len(items(t, h, "/api/v1/namespaces/default/pods")) == 1
	})
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}

// A StatefulSet replaces its pod that the kubelet rejects (a host port
// taken on the node it names) until the port is free, then the pod runs.
func TestStatefulSet_replacesRejectedPod(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	const ports = `"nodeName":"kubeplay-worker","containers":[{"name":"c","image":"nginx","ports":[{"containerPort":21017,"hostPort":21017}]}]`
	createPod(t, h, "holder", `{`+ports+`}`)
	waitFor(t, "holder to run", func() bool { return phaseOf(t, h, "holder") == "Running" })
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/statefulsets", `{"metadata":{"name":"web"},"spec":{"replicas":1,"serviceName":"web",
		"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{`+ports+`}}}}`)
	first := ""
	waitFor(t, "web-0 to be rejected", func() bool {
		code, p := do(t, h, "GET", podPath("default", "web-0"), "")
		if code == 200 && first == "" {
			first, _ = lookup(p, "metadata.uid").(string)
		}
		return len(eventMessages(t, h, "default", "StatefulSet", "web", "SuccessfulDelete")) > 0
	})
	mustDo(t, h, 200, "DELETE", podPath("default", "holder"), `{"gracePeriodSeconds":0}`)
	waitFor(t, "a new web-0 to run", func() bool {
		code, p := do(t, h, "GET", podPath("default", "web-0"), "")
		return code == 200 && lookup(p, "status.phase") == "Running" && lookup(p, "metadata.uid") != first
	})
	if events := strings.Join(kubeletEvents(t, h, "web-0"), "\n"); !strings.Contains(events, "NodePorts: Predicate NodePorts failed") {
		t.Errorf("kubelet events: %s", events)
	}
}
