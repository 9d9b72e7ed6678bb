//go:build js && wasm

// Command wasm is kubeplay in a browser tab: one sandbox on the browser store
// (SQLite WASM) and the whole site (UI and Kubernetes API) served to the page
// in memory, through the transport module static/kubeplay.js.
//
// The host page must, before starting this program:
//   - set globalThis.sqlite3 to the initialised SQLite WASM module
//     (await sqlite3InitModule() from @sqlite.org/sqlite-wasm), which the
//     store uses;
//   - set globalThis[bootHook] to a function(err, engine) that this program
//     calls once: with an error message if it could not start, or with the
//     engine, an object whose methods are described on engine below.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"syscall/js"

	"kubeplay/playground"
	"kubeplay/store"
	"kubeplay/web"
)

// bootHook is the global the page sets to learn that the engine started.
const bootHook = "__kubeplayBoot"

func main() {
	if err := run(context.Background(), js.Global()); err != nil {
		fmt.Fprintln(os.Stderr, "kubeplay:", err)
		os.Exit(1)
	}
	select {} // serve the page until it goes away
}

// run starts the engine and hands it to the page through globalThis[bootHook].
func run(ctx context.Context, global js.Value) error {
	hook := global.Get(bootHook)
	if hook.Type() != js.TypeFunction {
		return fmt.Errorf("globalThis.%s is not a function: start this program with static/kubeplay.js", bootHook)
	}
	site, err := open(ctx)
	if err != nil {
		hook.Invoke(err.Error(), js.Null())
		return err
	}
	hook.Invoke(js.Null(), newEngine(site).jsValue())
	return nil
}

// open opens the store and the sandbox and returns the site to serve. They
// live as long as the page, so nothing closes them once open.
func open(ctx context.Context) (http.Handler, error) {
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		return nil, err
	}
	sb, err := playground.Open(ctx, playground.Options{Store: st})
	if err != nil {
		st.Close()
		return nil, err
	}
	return web.New(sb), nil
}
