// Package structural implements the structural OpenAPI v3 schemas of
// CustomResourceDefinitions: parsing a CRD's openAPIV3Schema with the
// checks kube-apiserver makes when the CRD is written, and applying a
// schema to custom objects as kube-apiserver does — pruning unknown fields,
// defaulting, and validating values with the real server's messages.
//
// apiextensions-apiserver's own implementation is too heavy for the wasm
// build (see DESIGN.md), so this is kubeplay's own, checked against the real
// server by the golden scenarios crd-*.
package structural
