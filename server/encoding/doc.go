// Package encoding decodes request bodies and encodes responses the way
// kube-apiserver does: JSON or YAML by content negotiation, objects with
// kind, apiVersion and metadata first and metadata in ObjectMeta's field
// order, errors as metav1.Status objects.
package encoding
