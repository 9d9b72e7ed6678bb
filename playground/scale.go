package playground

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/authn"
	"kubeplay/server/inproc"
)

// What the disruption controller and the horizontal pod autoscaler share:
// the scale of a controller named by kind, found as kube-controller-manager's
// REST mapper and scale client find it, through discovery and /scale.

// informerUser and informerAgent are who kube-controller-manager's shared
// informers read as: the controller manager itself, whose role lists and
// watches everything, rather than a controller's ServiceAccount.
var informerUser = &authn.User{Name: "system:kube-controller-manager", Groups: []string{authn.Authenticated}}

const informerAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/shared-informers"

// servedIn reports whether sb serves gvr: an emulated release may not (no
// autoscaling/v2 before v1.23), and then its kube-controller-manager has no
// such controller to run: the controller sends no request.
func servedIn(sb *Sandbox, gvr schema.GroupVersionResource) func() bool {
	cat := sb.api.Catalog()
	return func() bool { return cat.Lookup(gvr) != nil }
}

// resourceFor is the resource of kind in the group version apiVersion, as
// discovery lists it.
func resourceFor(ctx context.Context, c *inproc.Client, apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	var list metav1.APIResourceList
	if err := c.Get(ctx, path, &list); err == nil {
		for _, r := range list.APIResources {
			if r.Kind == kind && !strings.Contains(r.Name, "/") {
				return gv.WithResource(r.Name), nil
			}
		}
	}
	return schema.GroupVersionResource{}, fmt.Errorf("no matches for kind %q in version %q", kind, gv.String())
}

// getScale reads the Scale of the object name of gvr in ns.
func getScale(ctx context.Context, c *inproc.Client, gvr schema.GroupVersionResource, ns, name string) (*autoscalingv1.Scale, error) {
	var scale autoscalingv1.Scale
	if err := c.Get(ctx, scalePath(gvr, ns, name), &scale); err != nil {
		return nil, err
	}
	return &scale, nil
}

func scalePath(gvr schema.GroupVersionResource, ns, name string) string {
	return namedPath(pathGroup(gvr), gvr.Resource, ns, name) + "/scale"
}

// hasScale reports whether gvr serves a scale subresource.
func hasScale(ctx context.Context, c *inproc.Client, gvr schema.GroupVersionResource) bool {
	path := "/apis/" + gvr.GroupVersion().String()
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	var list metav1.APIResourceList
	if c.Get(ctx, path, &list) != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource+"/scale" {
			return true
		}
	}
	return false
}

// labelSelectorQuery is a list's query selecting by sel.
func labelSelectorQuery(sel string) string {
	if sel == "" {
		return ""
	}
	return "?labelSelector=" + url.QueryEscape(sel)
}
