// Package celrules compiles and evaluates the x-kubernetes-validations
// rules of a CustomResourceDefinition's structural schema with cel-go, as
// kube-apiserver does: self (and oldSelf in transition rules) typed by the
// schema, message, messageExpression, reason and fieldPath, optionalOldSelf,
// the errors a CRD with a bad rule gets, and a subset of the Kubernetes CEL
// libraries (see library.go); and the expressions of a
// ValidatingAdmissionPolicy (policy.go), with its authorizer variable
// (authz.go), and their type check (typecheck.go).
//
// The engine does not import it: it goes through package celeval, which runs
// it in process natively and, in the browser, in the CEL module (wasm/cel),
// so that the engine's WebAssembly links no cel-go.
//
// k8s.io/apiserver's CEL packages are too heavy for the wasm build (see
// DESIGN.md); this is kubeplay's own, checked against the real server by
// the golden scenario crd-cel.
package celrules
