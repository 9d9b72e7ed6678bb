package apitypes

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in      string
		want    schema.GroupVersionResource
		wantErr bool
	}{
		{in: "v1/configmaps", want: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		{in: "apps/v1/deployments", want: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{in: "rbac.authorization.k8s.io/v1/roles", want: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}},
		{in: "configmaps", wantErr: true},
		{in: "apps/v1/deployments/scale", wantErr: true},
		{in: "/v1/configmaps", wantErr: true},
		{in: "v1/", wantErr: true},
		{in: "v1/ConfigMaps", wantErr: true},
		{in: "../v1/x", wantErr: true},
		{in: "v1/a%2Fb", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRef(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseRef(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got != tt.want {
				t.Errorf("ParseRef(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if back := FormatRef(got); back != tt.in {
				t.Errorf("FormatRef(ParseRef(%q)) = %q", tt.in, back)
			}
		})
	}
}

func TestListPath(t *testing.T) {
	cm := Type{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	deploy := Type{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}
	nodes := Type{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	tests := []struct {
		t    Type
		ns   string
		want string
	}{
		{cm, "default", "/api/v1/namespaces/default/configmaps"},
		{cm, "", "/api/v1/configmaps"},
		{deploy, "kube-system", "/apis/apps/v1/namespaces/kube-system/deployments"},
		{deploy, "", "/apis/apps/v1/deployments"},
		{nodes, "default", "/api/v1/nodes"},
	}
	for _, tt := range tests {
		if got := ListPath(tt.t, tt.ns); got != tt.want {
			t.Errorf("ListPath(%v, %q) = %q, want %q", tt.t.GVR, tt.ns, got, tt.want)
		}
	}
}
