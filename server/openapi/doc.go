// Package openapi serves the Kubernetes v1.35 OpenAPI v3 documents of the
// built-in group versions, as kube-apiserver does at /openapi/v3.
//
// The documents in spec/v3 are those kube-apiserver v1.35.4 serves, byte for
// byte (hence the same hashes); spec/discovery holds discovery
// documents the catalogue generator reads. Both are © The Kubernetes
// Authors, Apache License 2.0; see spec/README.md.
package openapi
