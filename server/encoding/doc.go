// Package encoding decodes request bodies and encodes responses the way
// kube-apiserver does: JSON or YAML by content negotiation (Negotiate: the
// Accept header's media types by preference, conversions such as as=Table,
// 406 when nothing served is acceptable — protobuf responses are not
// served, CBOR only for requests marked WithCBOR), objects with kind, apiVersion and metadata first and metadata
// in ObjectMeta's field order, gzip for large answers, errors as
// metav1.Status objects.
package encoding
