// Package website assembles the whole site kubeplay serves, one http.Handler
// for both entry points: the native server (package app) and the browser
// engine (wasm/). It only mounts what they hand it, so it builds for
// GOOS=js GOARCH=wasm: the native-only parts (the playground API's
// manager, the embedded browser-mode files) come in as handlers.
package website
