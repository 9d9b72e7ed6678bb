package conversion

import (
	"kubeplay/internal/jsonmap"
)

// Ingresses of extensions/v1beta1 and networking.k8s.io/v1beta1 (served
// until v1.21) are stored as networking.k8s.io/v1, converted as
// kube-apiserver converts them: v1beta1's spec.backend is v1's
// spec.defaultBackend, and a backend's serviceName and servicePort (a
// number or a port name) are v1's service.name and service.port.number or
// service.port.name.

// ingressBackends calls fn with each backend of an Ingress spec.
func ingressBackends(spec map[string]any, fn func(backend map[string]any)) {
	for _, rule := range jsonmap.Items(spec["rules"]) {
		for _, path := range jsonmap.Items(jsonmap.Child(rule, "http")["paths"]) {
			if b := jsonmap.Child(path, "backend"); b != nil {
				fn(b)
			}
		}
	}
}

// ingressToV1 converts a v1beta1 Ingress to v1, in place, with v1beta1's
// default pathType.
func ingressToV1(obj Object) {
	spec := jsonmap.Child(obj, "spec")
	if spec == nil {
		return
	}
	renameField(spec, "backend", "defaultBackend")
	for _, rule := range jsonmap.Items(spec["rules"]) {
		for _, path := range jsonmap.Items(jsonmap.Child(rule, "http")["paths"]) {
			if _, ok := path["pathType"]; path != nil && !ok {
				path["pathType"] = "ImplementationSpecific"
			}
		}
	}
	toV1 := func(b map[string]any) {
		name, hasName := b["serviceName"]
		port, hasPort := b["servicePort"]
		if !hasName && !hasPort {
			return
		}
		delete(b, "serviceName")
		delete(b, "servicePort")
		svc := map[string]any{}
		if hasName {
			svc["name"] = name
		}
		if s, ok := port.(string); ok {
			svc["port"] = map[string]any{"name": s}
		} else if hasPort {
			svc["port"] = map[string]any{"number": port}
		}
		b["service"] = svc
	}
	if b := jsonmap.Child(spec, "defaultBackend"); b != nil {
		toV1(b)
	}
	ingressBackends(spec, toV1)
}

// ingressFromV1 converts a v1 Ingress to v1beta1, in place.
func ingressFromV1(obj Object) {
	spec := jsonmap.Child(obj, "spec")
	if spec == nil {
		return
	}
	renameField(spec, "defaultBackend", "backend")
	fromV1 := func(b map[string]any) {
		svc := jsonmap.Child(b, "service")
		if svc == nil {
			return
		}
		delete(b, "service")
		if name, ok := svc["name"]; ok {
			b["serviceName"] = name
		}
		port := jsonmap.Child(svc, "port")
		if n, ok := port["number"]; ok {
			b["servicePort"] = n
		} else if n, ok := port["name"]; ok {
			b["servicePort"] = n
		}
	}
	if b := jsonmap.Child(spec, "backend"); b != nil {
		fromV1(b)
	}
	ingressBackends(spec, fromV1)
}
