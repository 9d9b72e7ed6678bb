package table_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"kubeplay/server/table"
)

// printed lists every type with its own printer, by group and resource.
var printed = [][2]string{
	{"", "configmaps"}, {"", "endpoints"}, {"", "events"}, {"", "namespaces"}, {"", "nodes"},
	{"", "persistentvolumeclaims"}, {"", "persistentvolumes"}, {"", "pods"}, {"", "podtemplates"},
	{"", "replicationcontrollers"}, {"", "resourcequotas"}, {"", "secrets"}, {"", "serviceaccounts"},
	{"", "services"}, {"apps", "controllerrevisions"}, {"apps", "daemonsets"}, {"apps", "deployments"},
	{"apps", "replicasets"}, {"apps", "statefulsets"}, {"autoscaling", "horizontalpodautoscalers"},
	{"batch", "cronjobs"}, {"batch", "jobs"}, {"coordination.k8s.io", "leases"},
	{"discovery.k8s.io", "endpointslices"}, {"events.k8s.io", "events"},
	{"networking.k8s.io", "ingressclasses"}, {"networking.k8s.io", "ingresses"},
	{"networking.k8s.io", "networkpolicies"}, {"networking.k8s.io", "ipaddresses"},
	{"networking.k8s.io", "servicecidrs"}, {"node.k8s.io", "runtimeclasses"},
	{"policy", "poddisruptionbudgets"}, {"rbac.authorization.k8s.io", "clusterrolebindings"},
	{"rbac.authorization.k8s.io", "rolebindings"}, {"scheduling.k8s.io", "priorityclasses"},
	{"storage.k8s.io", "storageclasses"}, {"storage.k8s.io", "csidrivers"}, {"storage.k8s.io", "csinodes"},
	{"storage.k8s.io", "volumeattachments"}, {"storage.k8s.io", "volumeattributesclasses"},
	{"resource.k8s.io", "deviceclasses"}, {"resource.k8s.io", "resourceclaims"},
	{"resource.k8s.io", "resourceclaimtemplates"}, {"resource.k8s.io", "resourceslices"},
	{"flowcontrol.apiserver.k8s.io", "flowschemas"}, {"flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
	{"certificates.k8s.io", "certificatesigningrequests"},
}

// wantCells is how many cells a printer gives: one per column, and one more
// for IPAddress (an age without a column, as kube-apiserver sends it).
func wantCells(p table.Printer, resource string) int {
	if resource == "ipaddresses" {
		return len(p.Columns()) + 1
	}
	return len(p.Columns())
}

func TestForResource_Columns(t *testing.T) {
	for _, gr := range printed {
		p := table.ForResource(gr[0], gr[1])
		if len(p.Columns()) < 2 || p.Columns()[1].Name == "Created At" {
			t.Errorf("%s/%s has no columns of its own", gr[0], gr[1])
		}
	}
	if got := table.ForResource("", "limitranges").Columns(); len(got) != 2 || got[1].Name != "Created At" {
		t.Errorf("default columns %v", got)
	}
}

// FuzzPrinters feeds every printer arbitrary objects: none may panic, and
// each gives as many cells as it always does.
func FuzzPrinters(f *testing.F) {
	f.Add(`{}`)
	f.Add(`{"metadata":{"name":7,"creationTimestamp":"x"},"spec":[],"status":{"conditions":"x"}}`)
	f.Add(`{"spec":{"containers":[1,{"name":2}],"replicas":"3","selector":{"matchExpressions":[{"operator":"Bogus"}]}}}`)
	f.Add(`{"status":{"containerStatuses":[{"state":{"terminated":{"exitCode":1.5}}}],"initContainerStatuses":[null]}}`)
	f.Add(`{"subsets":[{"addresses":[{"ip":"1.2.3.4"}],"ports":[{"port":"x"}]}],"series":{"count":-1}}`)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body string) {
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(body)))
		dec.UseNumber()
		if dec.Decode(&obj) != nil {
			return
		}
		for _, gr := range printed {
			p := table.ForResource(gr[0], gr[1])
			if cells := p.Cells(obj, now); len(cells) != wantCells(p, gr[1]) {
				t.Errorf("%s/%s: %d cells for %d columns", gr[0], gr[1], len(cells), len(p.Columns()))
			}
			p.Conditions(obj)
		}
	})
}
