package e2e_test

import (
	"strings"
	"testing"

	"kubeplay/e2e"
)

// cronJobV1 is a manifest of batch/v1, which came in v1.21.
const cronJobV1 = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  namespace: default
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: backup
            image: busybox
`

// TestKubectl_EmulatedVersion serves the API of v1.20: kubectl reports the
// server's version, and a newer manifest fails as it does against a real
// v1.20 cluster.
func TestKubectl_EmulatedVersion(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--emulated-version", "1.20").URL)
	if out := k.Succeeds("version"); !strings.Contains(out, "Server Version: v1.20.15+kubeplay") {
		t.Errorf("kubectl version:\n%s", out)
	}
	out := k.Stdin(cronJobV1).Fails("apply", "-f", "-")
	if !strings.Contains(out, `no matches for kind "CronJob" in version "batch/v1"`) {
		t.Errorf("kubectl apply of batch/v1 CronJob:\n%s", out)
	}
}

// TestKubectl_DeprecatedVersion applies a batch/v1beta1 CronJob to v1.24,
// which kubectl answers with the server's deprecation warning, and then
// to v1.25, which no longer serves it.
func TestKubectl_DeprecatedVersion(t *testing.T) {
	manifest := strings.Replace(cronJobV1, "batch/v1", "batch/v1beta1", 1)
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--emulated-version", "1.24").URL)
	out := k.Stdin(manifest).Succeeds("apply", "-f", "-")
	if !strings.Contains(out, "Warning: batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob") ||
		!strings.Contains(out, "cronjob.batch/nightly created") {
		t.Errorf("kubectl apply to 1.24:\n%s", out)
	}
	k = e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--emulated-version", "1.25").URL)
	if out := k.Stdin(manifest).Fails("apply", "-f", "-"); !strings.Contains(out, `no matches for kind "CronJob" in version "batch/v1beta1"`) {
		t.Errorf("kubectl apply to 1.25:\n%s", out)
	}
}

// TestKubectl_BetaWarning switches on a beta version v1.35 serves only on
// request; kubectl prints its warning, worded as kube-apiserver's.
func TestKubectl_BetaWarning(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--runtime-config", "networking.k8s.io/v1beta1=true").URL)
	out := k.Succeeds("get", "ipaddresses.v1beta1.networking.k8s.io")
	if !strings.Contains(out, "Warning: networking.k8s.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+") {
		t.Errorf("kubectl get:\n%s", out)
	}
}

// cronTabCRDV1beta1 is a CRD manifest as operators shipped them before
// v1.16: apiextensions.k8s.io/v1beta1, one version, a top-level schema and
// printer column.
const cronTabCRDV1beta1 = `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  version: v1
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  additionalPrinterColumns:
  - name: Spec
    type: string
    JSONPath: .spec.cronSpec
  validation:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            cronSpec:
              type: string
            replicas:
              type: integer
`

// TestKubectl_CRDV1beta1 applies an old CRD manifest to v1.21, which
// kubectl answers with the deprecation warning, and an object of it; v1.22
// no longer serves the CRD's version.
func TestKubectl_CRDV1beta1(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--emulated-version", "1.21").URL)
	out := k.Stdin(cronTabCRDV1beta1).Succeeds("apply", "-f", "-")
	if !strings.Contains(out, "Warning: apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition") ||
		!strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created") {
		t.Errorf("kubectl apply to 1.21:\n%s", out)
	}
	cronTab := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-cron\n  namespace: default\nspec:\n  cronSpec: '* * * * */5'\n  image: my-cron-image\n"
	if out := k.Stdin(cronTab).Succeeds("apply", "-f", "-"); !strings.Contains(out, "crontab.stable.example.com/my-cron created") {
		t.Errorf("kubectl apply of a CronTab:\n%s", out)
	}
	if out := k.Succeeds("get", "ct", "-o", "wide"); !strings.Contains(out, "* * * * */5") || !strings.Contains(out, "SPEC") {
		t.Errorf("kubectl get ct:\n%s", out)
	}
	if out := k.Succeeds("get", "ct", "my-cron", "-o", "jsonpath={.spec.image}"); out != "my-cron-image" {
		t.Errorf("kubectl get ct -o jsonpath: %q", out)
	}
	k = e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--emulated-version", "1.22").URL)
	if out := k.Stdin(cronTabCRDV1beta1).Fails("apply", "-f", "-"); !strings.Contains(out, `no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1beta1"`) {
		t.Errorf("kubectl apply to 1.22:\n%s", out)
	}
}
