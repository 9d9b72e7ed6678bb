//go:build !js

package encoding

import (
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// Protobuf bodies are decoded natively only. Protobuf field numbers live only
// in the generated Go types of k8s.io/api, which would add megabytes to the
// WebAssembly download; in the browser every request comes through
// kubeplay.fetch as JSON, so nothing there sends protobuf. See protobuf_js.go.

// protobufSerializer decodes the built-in types of the served GA groups.
var protobufSerializer = sync.OnceValue(func() *protobuf.Serializer {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme, coordinationv1.AddToScheme, rbacv1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme, eventsv1.AddToScheme, storagev1.AddToScheme,
		schedulingv1.AddToScheme, nodev1.AddToScheme, discoveryv1.AddToScheme,
		certificatesv1.AddToScheme, admissionregistrationv1.AddToScheme, flowcontrolv1.AddToScheme,
		resourcev1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err) // the registrations above are static: an error is a programming error
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return protobuf.NewSerializer(scheme, scheme)
})

func decodeProtobuf(body []byte) (map[string]any, error) {
	obj, gvk, err := protobufSerializer().Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk, err)
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return u, nil
}
