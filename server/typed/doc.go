// Package typed decodes request bodies of the built-in kinds the way
// kube-apiserver does when it decodes them into its Go types, with the
// OpenAPI schemas standing in for those types:
//
//   - a value of the wrong JSON type fails with the message Go's JSON decoder
//     gives ("json: cannot unmarshal string into Go struct field
//     DeploymentSpec.spec.replicas of type int32"), and so do the types with
//     their own decoders (quantities, times, base64 bytes, int-or-string);
//   - fields the type does not have are dropped and reported ("unknown
//     field \"spec.foo\""), as are fields given twice ("duplicate field");
//     the caller turns those into warnings or errors per fieldValidation;
//   - null fields are dropped, as decoding into a Go field and encoding it
//     again drops them.
//
// It walks the JSON text itself, not a decoded map, so that errors and
// reports come in document order, as kube-apiserver's do.
package typed
