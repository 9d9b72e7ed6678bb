package server_test

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	"kubeplay/server"
	"kubeplay/server/releases"
)

// localAPIService is what the tests read of an APIService.
type localAPIService struct {
	Metadata struct {
		Name   string            `json:"name"`
		UID    string            `json:"uid"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Group                string `json:"group"`
		Version              string `json:"version"`
		GroupPriorityMinimum int    `json:"groupPriorityMinimum"`
		VersionPriority      int    `json:"versionPriority"`
	} `json:"spec"`
	Status struct {
		Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
	} `json:"status"`
}

// apiServices lists the server's APIServices by name.
func apiServices(t *testing.T, h http.Handler) map[string]localAPIService {
	t.Helper()
	var list struct{ Items []localAPIService }
	getJSON(t, h, "/apis/apiregistration.k8s.io/v1/apiservices", &list)
	out := map[string]localAPIService{}
	for _, s := range list.Items {
		out[s.Metadata.Name] = s
	}
	return out
}

// discoveredAPIServiceNames names the APIService of each group version
// discovery lists (/api, /apis), but apiregistration.k8s.io's, for which
// kube-apiserver registers none.
func discoveredAPIServiceNames(t *testing.T, h http.Handler) []string {
	t.Helper()
	var core struct{ Versions []string }
	getJSON(t, h, "/api", &core)
	var names []string
	for _, v := range core.Versions {
		names = append(names, v+".")
	}
	var groups struct {
		Groups []struct {
			Name     string
			Versions []struct{ Version string }
		}
	}
	getJSON(t, h, "/apis", &groups)
	for _, g := range groups.Groups {
		if g.Name == "apiregistration.k8s.io" {
			continue
		}
		for _, v := range g.Versions {
			names = append(names, v.Version+"."+g.Name)
		}
	}
	slices.Sort(names)
	return names
}

// checkAPIServicesFollowDiscovery checks that the local APIServices are
// those of the group versions discovery lists, each labelled, with its
// priorities and Available, and returns them.
func checkAPIServicesFollowDiscovery(t *testing.T, h http.Handler, label string) map[string]localAPIService {
	t.Helper()
	services := apiServices(t, h)
	if got, want := slices.Sorted(maps.Keys(services)), discoveredAPIServiceNames(t, h); !slices.Equal(got, want) {
		t.Errorf("%s: APIServices %v, discovery %v", label, got, want)
	}
	for name, s := range services {
		if s.Metadata.Labels["kube-aggregator.kubernetes.io/automanaged"] != "onstart" || s.Spec.GroupPriorityMinimum == 0 || s.Spec.VersionPriority == 0 ||
			len(s.Status.Conditions) != 1 || s.Status.Conditions[0].Type != "Available" || s.Status.Conditions[0].Status != "True" {
			t.Errorf("%s: APIService %s = %+v", label, name, s)
		}
	}
	return services
}

// TestLocalAPIServices_FollowSwitches switches group versions off and on
// at run time, by runtime configuration and by release: the local
// APIServices follow discovery, those that stay keep their uid, and new
// ones get kube-apiserver's priorities (as the oracle started with
// --runtime-config gave them: testdata/oracle/scenarios/
// apiservices-runtime-config.json).
func TestLocalAPIServices_FollowSwitches(t *testing.T) {
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	before := checkAPIServicesFollowDiscovery(t, srv, "default")

	rc, err := server.ParseRuntimeConfig("batch/v1=false,networking.k8s.io/v1beta1=true")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.SetRuntimeConfig(rc); err != nil {
		t.Fatal(err)
	}
	switched := checkAPIServicesFollowDiscovery(t, srv, "batch/v1 off, networking.k8s.io/v1beta1 on")
	if _, ok := switched["v1.batch"]; ok {
		t.Error("v1.batch kept with batch/v1 off")
	}
	if s := switched["v1beta1.networking.k8s.io"].Spec; s.Group != "networking.k8s.io" || s.Version != "v1beta1" || s.GroupPriorityMinimum != 17200 || s.VersionPriority != 9 {
		t.Errorf("v1beta1.networking.k8s.io spec = %+v, want kube-apiserver's 17200/9", s)
	}
	if switched["v1.apps"].Metadata.UID != before["v1.apps"].Metadata.UID {
		t.Error("v1.apps made again, not kept")
	}

	if err := srv.SetRuntimeConfig(nil); err != nil {
		t.Fatal(err)
	}
	back := checkAPIServicesFollowDiscovery(t, srv, "defaults again")
	if got, want := slices.Sorted(maps.Keys(back)), slices.Sorted(maps.Keys(before)); !slices.Equal(got, want) {
		t.Errorf("APIServices %v, want the first ones %v", got, want)
	}

	for minor := releases.Oldest; minor <= releases.Newest; minor++ {
		if err := srv.SetVersion(minor); err != nil {
			t.Fatal(err)
		}
		checkAPIServicesFollowDiscovery(t, srv, releases.GitVersion(minor))
	}
}
