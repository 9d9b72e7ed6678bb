//go:build !js

package encoding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	autoscalingv2beta1 "k8s.io/api/autoscaling/v2beta1"
	autoscalingv2beta2 "k8s.io/api/autoscaling/v2beta2"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Protobuf is served natively only. Protobuf field numbers live only in the
// generated Go types of k8s.io/api (and apiextensions, kube-aggregator),
// which would add 22 MB raw, 1.5 MB brotli to the WebAssembly engine (see
// the README); in the browser
// every request comes through kubeplay.fetch as JSON, so nothing there
// speaks protobuf. See protobuf_js.go.

// ProtobufServed says whether this build reads and writes protobuf.
const ProtobufServed = true

// protobufCodecs are the serializers of the built-in types of every
// group-version kubeplay serves, of the meta.k8s.io kinds (Status,
// WatchEvent, the options, PartialObjectMetadata) and of aggregated
// discovery (apidiscovery.k8s.io/v2). Custom resources have no
// protobuf form.
var protobufCodecs = sync.OnceValue(func() (c struct {
	scheme *runtime.Scheme
	proto  *protobuf.Serializer
	json   *serializerjson.Serializer
}) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, admissionregistrationv1.AddToScheme, admissionregistrationv1beta1.AddToScheme,
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme, apiregistrationv1.AddToScheme, apidiscoveryv2.AddToScheme,
		appsv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme, autoscalingv2beta1.AddToScheme, autoscalingv2beta2.AddToScheme,
		batchv1.AddToScheme, batchv1beta1.AddToScheme, certificatesv1.AddToScheme, certificatesv1beta1.AddToScheme,
		coordinationv1.AddToScheme, coordinationv1beta1.AddToScheme, discoveryv1.AddToScheme, discoveryv1beta1.AddToScheme,
		eventsv1.AddToScheme, eventsv1beta1.AddToScheme, extensionsv1beta1.AddToScheme,
		flowcontrolv1.AddToScheme, flowcontrolv1beta1.AddToScheme, flowcontrolv1beta2.AddToScheme, flowcontrolv1beta3.AddToScheme,
		networkingv1.AddToScheme, networkingv1beta1.AddToScheme, nodev1.AddToScheme, nodev1beta1.AddToScheme,
		policyv1.AddToScheme, policyv1beta1.AddToScheme, rbacv1.AddToScheme, rbacv1beta1.AddToScheme,
		resourcev1.AddToScheme, schedulingv1.AddToScheme, schedulingv1beta1.AddToScheme,
		storagev1.AddToScheme, storagev1beta1.AddToScheme,
		metav1.AddMetaToScheme, metav1beta1.AddMetaToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err) // the registrations above are static: an error is a programming error
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	c.scheme = scheme
	c.proto = protobuf.NewSerializer(scheme, scheme)
	c.json = serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, scheme, scheme, serializerjson.SerializerOptions{})
	return c
})

// decodeProtobuf decodes a protobuf body of a built-in kind. A body of a
// kind that has no protobuf form decodes to its apiVersion and kind alone,
// which the caller refuses as of the wrong kind.
func decodeProtobuf(body []byte) (map[string]any, error) {
	c := protobufCodecs()
	obj, gvk, err := c.proto.Decode(body, nil, nil)
	if runtime.IsNotRegisteredError(err) && gvk != nil {
		return map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind}, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk, err)
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	// Read again as a JSON body is read (numbers as json.Number, embedded
	// objects such as a ControllerRevision's data decoded the same way), so
	// that an object sent in protobuf compares equal to the same object
	// sent in JSON or read from storage.
	j, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk, err)
	}
	return DecodeObject(JSON, j)
}

// HasProtobuf reports whether objects of apiVersion and kind have a
// protobuf form.
func HasProtobuf(apiVersion, kind string) bool {
	return protobufCodecs().scheme.Recognizes(schema.FromAPIVersionAndKind(apiVersion, kind))
}

// encodeProtobuf encodes v, a built-in object (a map with its apiVersion
// and kind, or a typed object such as a Status), as kube-apiserver writes
// it in protobuf: the "k8s\x00" magic, then a runtime.Unknown holding the
// kind and the object's bytes. ok is false when v's kind has no protobuf
// form (the caller then answers JSON).
func encodeProtobuf(v any) (b []byte, ok bool, err error) {
	c := protobufCodecs()
	obj, isObject := v.(runtime.Object)
	if !isObject || obj.GetObjectKind().GroupVersionKind().Kind == "" {
		j, err := Marshal(v)
		if err != nil {
			return nil, false, err
		}
		var typeMeta runtime.TypeMeta
		if err := json.Unmarshal(j, &typeMeta); err != nil {
			return nil, false, err
		}
		if obj, _, err = c.json.Decode(j, nil, nil); err != nil {
			return nil, false, nil
		}
		// As given: kube-apiserver's core resource list has no apiVersion,
		// which decoding would fill in.
		obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(typeMeta.APIVersion, typeMeta.Kind))
	}
	if _, isMarshaler := obj.(interface{ Marshal() ([]byte, error) }); !isMarshaler {
		return nil, false, nil // a Table, or a kind that never had a protobuf message
	}
	var buf bytes.Buffer
	if err := c.proto.Encode(obj, &buf); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// WatchEventProtobuf is a watch event in protobuf: a metav1.WatchEvent
// (without the magic) whose object holds obj, itself as encodeProtobuf
// writes it. A chunked stream frames each with ProtobufFrame; a WebSocket
// sends each as one message.
func WatchEventProtobuf(typ string, obj []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
	return ev.Marshal()
}
