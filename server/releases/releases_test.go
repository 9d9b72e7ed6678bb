package releases_test

import (
	"testing"

	"kubeplay/server/releases"
)

// TestRemovals checks the table against the deprecated API migration guide
// (kubernetes.io/docs/reference/using-api/deprecation-guide): each release
// named there is the first that no longer serves the resource, and the one
// before it served it by default.
func TestRemovals(t *testing.T) {
	removals := []struct {
		group, version, resource string
		removed                  int
	}{
		{"flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", 32},
		{"flowcontrol.apiserver.k8s.io", "v1beta2", "prioritylevelconfigurations", 29},
		{"storage.k8s.io", "v1beta1", "csistoragecapacities", 27},
		{"flowcontrol.apiserver.k8s.io", "v1beta1", "flowschemas", 26},
		{"autoscaling", "v2beta2", "horizontalpodautoscalers", 26},
		{"batch", "v1beta1", "cronjobs", 25},
		{"discovery.k8s.io", "v1beta1", "endpointslices", 25},
		{"events.k8s.io", "v1beta1", "events", 25},
		{"autoscaling", "v2beta1", "horizontalpodautoscalers", 25},
		{"policy", "v1beta1", "poddisruptionbudgets", 25},
		{"policy", "v1beta1", "podsecuritypolicies", 25},
		{"node.k8s.io", "v1beta1", "runtimeclasses", 25},
		{"admissionregistration.k8s.io", "v1beta1", "validatingwebhookconfigurations", 22},
		{"apiextensions.k8s.io", "v1beta1", "customresourcedefinitions", 22},
		{"apiregistration.k8s.io", "v1beta1", "apiservices", 22},
		{"authentication.k8s.io", "v1beta1", "tokenreviews", 22},
		{"authorization.k8s.io", "v1beta1", "subjectaccessreviews", 22},
		{"certificates.k8s.io", "v1beta1", "certificatesigningrequests", 22},
		{"coordination.k8s.io", "v1beta1", "leases", 22},
		{"extensions", "v1beta1", "ingresses", 22},
		{"networking.k8s.io", "v1beta1", "ingresses", 22},
		{"networking.k8s.io", "v1beta1", "ingressclasses", 22},
		{"rbac.authorization.k8s.io", "v1beta1", "clusterroles", 22},
		{"scheduling.k8s.io", "v1beta1", "priorityclasses", 22},
		{"storage.k8s.io", "v1beta1", "storageclasses", 22},
		{"extensions", "v1beta1", "networkpolicies", 16},
		{"extensions", "v1beta1", "daemonsets", 16},
		{"apps", "v1beta2", "daemonsets", 16},
		{"apps", "v1beta1", "deployments", 16},
		{"apps", "v1beta1", "statefulsets", 16},
		{"extensions", "v1beta1", "replicasets", 16},
		{"extensions", "v1beta1", "podsecuritypolicies", 16},
	}
	for _, rm := range removals {
		t.Run(rm.group+"/"+rm.version+"/"+rm.resource, func(t *testing.T) {
			r := releases.Lookup(rm.group, rm.version, rm.resource)
			if r == nil {
				t.Fatal("not in the table")
			}
			if rm.removed > releases.Oldest && !r.DefaultIn(rm.removed-1) {
				t.Errorf("not served by default in 1.%d", rm.removed-1)
			}
			for m := rm.removed; m <= releases.Newest; m++ {
				if r.DefaultIn(m) {
					t.Errorf("served by default in 1.%d", m)
				}
			}
			if r.Removed != rm.removed {
				t.Errorf("Removed = %d", r.Removed)
			}
		})
	}
}

// TestAdditions checks when GA versions came, as their releases announced
// them: a manifest in a newer version finds nothing in an older release.
func TestAdditions(t *testing.T) {
	for _, add := range []struct {
		group, version, resource string
		added                    int
	}{
		{"networking.k8s.io", "v1", "ingresses", 19},
		{"batch", "v1", "cronjobs", 21},
		{"policy", "v1", "poddisruptionbudgets", 21},
		{"autoscaling", "v2", "horizontalpodautoscalers", 23},
		{"flowcontrol.apiserver.k8s.io", "v1", "flowschemas", 29},
		{"admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", 30},
		{"resource.k8s.io", "v1", "resourceclaims", 34},
	} {
		r := releases.Lookup(add.group, add.version, add.resource)
		if r == nil || r.In(add.added-1) || !r.DefaultIn(add.added) || !r.DefaultIn(releases.Newest) {
			t.Errorf("%s/%s %s: not added in 1.%d: %+v", add.group, add.version, add.resource, add.added, r)
		}
	}
}

// TestWarning checks the deprecation warnings against kube-apiserver's:
// v1.35 started with --runtime-config for these group versions.
func TestWarning(t *testing.T) {
	for _, tc := range []struct {
		group, version, resource string
		minor                    int
		want                     string
	}{
		{"networking.k8s.io", "v1beta1", "ipaddresses", 35, "networking.k8s.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+"},
		{"storage.k8s.io", "v1beta1", "volumeattributesclasses", 35, "storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated in v1.34+, unavailable in v1.37+; use storage.k8s.io/v1 VolumeAttributesClass"},
		{"extensions", "v1beta1", "ingresses", 21, "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress"},
		{"batch", "v1beta1", "cronjobs", 21, "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"},
		{"batch", "v1beta1", "cronjobs", 20, ""},       // not deprecated yet
		{"extensions", "v1beta1", "ingresses", 18, ""}, // no warnings before v1.19
		{"batch", "v1", "jobs", 35, ""},
	} {
		if got := releases.Lookup(tc.group, tc.version, tc.resource).Warning(tc.minor); got != tc.want {
			t.Errorf("%s/%s %s in 1.%d: %q, want %q", tc.group, tc.version, tc.resource, tc.minor, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int{"1.21": 21, "v1.16": 16, "1.35.4": 35} {
		if got, err := releases.Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"1.15", "1.36", "2.0", "1", "latest"} {
		if _, err := releases.Parse(in); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
	if got := releases.GitVersion(21); got != "v1.21.14" {
		t.Errorf("GitVersion(21) = %q", got)
	}
}
