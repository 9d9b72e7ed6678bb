// Package celtypes is what the engine and its CEL rules (package celrules)
// exchange: the expressions of a CRD's schema and of an admission policy,
// the inputs they run on and what they answer. Everything here marshals to
// JSON, because in the browser the rules run in a second WebAssembly module
// (wasm/cel), loaded only when a page first needs them, and these values
// travel between the two as JSON (see package celeval and protocol.go).
//
// It imports no cel-go package: the engine imports it in every build.
package celtypes
