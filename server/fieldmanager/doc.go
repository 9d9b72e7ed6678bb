// Package fieldmanager tracks who owns which field of an object
// (metadata.managedFields) and merges Server-Side Apply configurations, as
// kube-apiserver does: it composes the managers of
// k8s.io/apimachinery/pkg/util/managedfields over objects held as
// unstructured maps, typed by structured-merge-diff schemas built from the
// embedded OpenAPI v3 documents (list and map types, merge keys).
package fieldmanager
