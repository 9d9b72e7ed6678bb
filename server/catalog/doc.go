// Package catalog describes the built-in resource types kubeplay serves:
// group, version, kind, plural and singular names, scope, verbs, short
// names, categories and subresources.
//
// The table in zz_generated_resources.go is derived by internal/gen from the
// OpenAPI v3 documents in ../openapi/spec (v1.35's, and those of the beta
// group versions older releases served; paths and
// x-kubernetes-group-version-kind) and the discovery documents there (names,
// short names, categories), so the binary parses nothing at start-up. Which
// of these types a server serves depends on the release it emulates (see
// package releases).
// Facts that no document carries (the order of groups in discovery, where
// objects are stored, which name rule a type uses) are tables in this
// package, each checked against the real kube-apiserver by the server's
// golden tests.
package catalog

//go:generate go run ./internal/gen -spec ../openapi/spec -out zz_generated_resources.go
