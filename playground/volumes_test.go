package playground_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"kubeplay/playground"
)

const claimJSON = `{"metadata":{"name":%q},"spec":{%s"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`

func createClaim(t testing.TB, h http.Handler, name, extraSpec string) map[string]any {
	t.Helper()
	return mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", fmt.Sprintf(claimJSON, name, extraSpec))
}

func child(o map[string]any, path ...string) map[string]any {
	for _, k := range path {
		o, _ = o[k].(map[string]any)
	}
	return o
}

// reasons are the reasons of the events about the object named name, in
// the order they were first recorded.
func reasons(t testing.TB, h http.Handler, name string) []string {
	var out []string
	for _, ev := range items(t, h, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name="+name) {
		out = append(out, ev["reason"].(string))
	}
	return out
}

// A new sandbox has kind's default StorageClass; a claim of it waits for a
// pod, is provisioned on the pod's node by the simulated provisioner,
// bound, and, once the pod and the claim are deleted, the volume goes too.
func TestVolumes_dynamicProvisioning(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	class := mustDo(t, h, 200, "GET", "/apis/storage.k8s.io/v1/storageclasses/standard", "")
	if class["provisioner"] != "rancher.io/local-path" || class["volumeBindingMode"] != "WaitForFirstConsumer" ||
		child(class, "metadata", "annotations")["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Fatalf("default class %s", jsonOf(class))
	}
	claim := createClaim(t, h, "data", "")
	if class := child(claim, "spec")["storageClassName"]; class != "standard" {
		t.Fatalf("claim class %v", class)
	}
	waitFor(t, "the WaitForFirstConsumer event", func() bool {
		return strings.Contains(strings.Join(reasons(t, h, "data"), ","), "WaitForFirstConsumer")
	})
	waitForDefaultServiceAccount(t, h, "default")
	// A node of its own, which the pod garbage collector leaves its pods on.
	mustDo(t, h, 201, "POST", "/api/v1/nodes", `{"metadata":{"name":"node-a"}}`)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"user"},"spec":{"nodeName":"node-a",
		"containers":[{"name":"c","image":"busybox"}],"volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"data"}}]}}`)
	var got map[string]any
	waitFor(t, "the claim to be bound", func() bool {
		got = mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/data", "")
		return child(got, "status")["phase"] == "Bound"
	})
	pvName := "pvc-" + uidOf(claim)
	wantAnn := `{"pv.kubernetes.io/bind-completed":"yes","pv.kubernetes.io/bound-by-controller":"yes",` +
		`"volume.beta.kubernetes.io/storage-provisioner":"rancher.io/local-path","volume.kubernetes.io/selected-node":"node-a",` +
		`"volume.kubernetes.io/storage-provisioner":"rancher.io/local-path"}`
	if ann := jsonOf(child(got, "metadata", "annotations")); ann != wantAnn || child(got, "spec")["volumeName"] != pvName ||
		jsonOf(child(got, "status")) != `{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"phase":"Bound"}` {
		t.Errorf("claim annotations %s, volume %v, status %s", ann, child(got, "spec")["volumeName"], jsonOf(child(got, "status")))
	}
	pv := mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/"+pvName, "")
	spec := child(pv, "spec")
	if child(pv, "status")["phase"] != "Bound" || spec["persistentVolumeReclaimPolicy"] != "Delete" || spec["storageClassName"] != "standard" ||
		child(spec, "claimRef")["uid"] != uidOf(claim) || !strings.Contains(jsonOf(spec["nodeAffinity"]), `"values":["node-a"]`) ||
		jsonOf(child(pv, "metadata")["finalizers"]) != `["kubernetes.io/pv-protection"]` {
		t.Errorf("volume %s", jsonOf(pv))
	}
	// The PV controller's ExternalProvisioning and the provisioner's own
	// events answer the same change, the scheduler's choice of node, in
	// either order; the provisioner's last may come after the claim is
	// bound, so they are read once the controllers are idle.
	waitIdle(t, sb)
	claimEvents := reasons(t, h, "data")
	provisioned := slices.DeleteFunc(slices.Clone(claimEvents), func(r string) bool { return r == "ExternalProvisioning" })
	if !slices.Contains(claimEvents, "ExternalProvisioning") || !strings.HasSuffix(strings.Join(provisioned, ","), "WaitForFirstConsumer,Provisioning,ProvisioningSucceeded") {
		t.Errorf("claim events %s", strings.Join(claimEvents, ","))
	}

	// In use, the claim stays until its pod is gone.
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data", "")
	waitIdle(t, sb)
	if got := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/data", ""); jsonOf(child(got, "metadata")["finalizers"]) != `["kubernetes.io/pvc-protection"]` {
		t.Fatalf("claim in use: %s", jsonOf(got))
	}
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/user?gracePeriodSeconds=0", "")
	waitFor(t, "the volume to be deleted", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/persistentvolumes/"+pvName, "")
		return code == 404
	})
	mustDo(t, h, 404, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/data", "")
	waitIdle(t, sb)
}

// A claim binds to the smallest available volume that fits it; the
// volume of a deleted claim is Released and, by policy Retain, kept.
func TestVolumes_staticBinding(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	for _, pv := range []struct{ name, size string }{{"big", "10Gi"}, {"small", "2Gi"}, {"tiny", "500Mi"}} {
		mustDo(t, h, 201, "POST", "/api/v1/persistentvolumes", fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"capacity":{"storage":%q},
			"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/data"}}}`, pv.name, pv.size))
	}
	// The binder chooses among the volumes it has seen, as
	// kube-controller-manager's among those in its informer: an Available
	// volume is one it has.
	for _, name := range []string{"big", "small", "tiny"} {
		waitFor(t, name+" to be Available", func() bool {
			return child(mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/"+name, ""), "status")["phase"] == "Available"
		})
	}
	createClaim(t, h, "manual", `"storageClassName":"",`)
	var claim map[string]any
	waitFor(t, "the claim to be bound", func() bool {
		claim = mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/manual", "")
		return child(claim, "status")["phase"] == "Bound"
	})
	if child(claim, "spec")["volumeName"] != "small" || jsonOf(child(claim, "status", "capacity")) != `{"storage":"2Gi"}` {
		t.Fatalf("claim %s", jsonOf(claim))
	}
	pv := mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/small", "")
	if child(pv, "status")["phase"] != "Bound" || jsonOf(child(pv, "metadata", "annotations")) != `{"pv.kubernetes.io/bound-by-controller":"yes"}` {
		t.Fatalf("volume %s", jsonOf(pv))
	}
	for _, name := range []string{"big", "tiny"} {
		waitFor(t, name+" to be Available", func() bool {
			return child(mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/"+name, ""), "status")["phase"] == "Available"
		})
	}
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/manual", "")
	waitFor(t, "the volume to be Released", func() bool {
		return child(mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/small", ""), "status")["phase"] == "Released"
	})
	waitIdle(t, sb)
	mustDo(t, h, 200, "GET", "/api/v1/persistentvolumes/small", "")

	// Deleted, a volume that is not bound goes at once.
	mustDo(t, h, 200, "DELETE", "/api/v1/persistentvolumes/small", "")
	waitFor(t, "the volume to be gone", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/persistentvolumes/small", "")
		return code == 404
	})
}

// A claim that names its volume binds to it, the volume marked as bound
// by the controller, the claim not.
func TestVolumes_preBoundClaim(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/persistentvolumes", `{"metadata":{"name":"chosen"},"spec":{"capacity":{"storage":"1Gi"},
		"accessModes":["ReadWriteOnce"],"storageClassName":"manual","hostPath":{"path":"/data"}}}`)
	createClaim(t, h, "mine", `"storageClassName":"manual","volumeName":"chosen",`)
	var claim map[string]any
	waitFor(t, "the claim to be bound", func() bool {
		claim = mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/mine", "")
		return child(claim, "status")["phase"] == "Bound"
	})
	if ann := jsonOf(child(claim, "metadata", "annotations")); ann != `{"pv.kubernetes.io/bind-completed":"yes"}` {
		t.Errorf("claim annotations %s", ann)
	}
	waitIdle(t, sb)
}

// Without the simulated provisioner (as envtest and the root cluster run),
// a new cluster has no StorageClass, as kube-apiserver alone.
func TestVolumes_noDefaultClassWithoutProvisioner(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("provisioner")})
	if classes := items(t, sb.Handler(), "/apis/storage.k8s.io/v1/storageclasses"); len(classes) != 0 {
		t.Errorf("%d StorageClasses", len(classes))
	}
}

// A VolumeAttributesClass a claim names stays, once deleted, until the
// claim is gone.
func TestVolumes_attributesClassProtection(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/storage.k8s.io/v1/volumeattributesclasses", `{"metadata":{"name":"fast"},"driverName":"example.com/csi","parameters":{"iops":"100"}}`)
	createClaim(t, h, "tuned", `"storageClassName":"","volumeAttributesClassName":"fast",`)
	mustDo(t, h, 200, "DELETE", "/apis/storage.k8s.io/v1/volumeattributesclasses/fast", "")
	waitIdle(t, sb)
	vac := mustDo(t, h, 200, "GET", "/apis/storage.k8s.io/v1/volumeattributesclasses/fast", "")
	if jsonOf(child(vac, "metadata")["finalizers"]) != `["kubernetes.io/vac-protection"]` {
		t.Fatalf("class in use: %s", jsonOf(vac))
	}
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/tuned", "")
	waitFor(t, "the class to be gone", func() bool {
		code, _ := do(t, h, "GET", "/apis/storage.k8s.io/v1/volumeattributesclasses/fast", "")
		return code == 404
	})
}
