package playground_test

import (
	"fmt"
	"testing"

	"kubeplay/playground"
)

const gadgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func gadgetPath(ns, name string) string {
	return "/apis/example.com/v1/namespaces/" + ns + "/gadgets/" + name
}

// TestCustomResources_Controllers checks that the controllers know the
// resources of CRDs created after they started: the garbage collector
// collects custom objects and objects they own, and the namespace
// controller deletes the custom objects of a terminating namespace.
func TestCustomResources_Controllers(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetsCRD)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"crs"}}`)

	// A custom object owning a ConfigMap, and a ConfigMap owning a custom object.
	owner := mustDo(t, h, 201, "POST", "/apis/example.com/v1/namespaces/crs/gadgets", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1"}}`)
	createCM(t, h, "crs", "owned", fmt.Sprintf(`"ownerReferences":[{"apiVersion":"example.com/v1","kind":"Gadget","name":"g1","uid":%q}]`, uidOf(owner)))
	cm := createCM(t, h, "crs", "cm-owner", "")
	mustDo(t, h, 201, "POST", "/apis/example.com/v1/namespaces/crs/gadgets",
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g2","ownerReferences":[`+ownerRef("cm-owner", uidOf(cm), false)+`]}}`)

	mustDo(t, h, 200, "DELETE", gadgetPath("crs", "g1"), "")
	waitFor(t, "the ConfigMap owned by a custom object to be collected", gone(t, h, cmPath("crs", "owned")))
	mustDo(t, h, 200, "DELETE", cmPath("crs", "cm-owner"), "")
	waitFor(t, "the custom object owned by a ConfigMap to be collected", gone(t, h, gadgetPath("crs", "g2")))

	mustDo(t, h, 201, "POST", "/apis/example.com/v1/namespaces/crs/gadgets", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g3","finalizers":[]}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/crs", "")
	waitFor(t, "the terminating namespace's custom objects to be deleted", gone(t, h, gadgetPath("crs", "g3")))
	waitFor(t, "the namespace to go", gone(t, h, "/api/v1/namespaces/crs"))
}
