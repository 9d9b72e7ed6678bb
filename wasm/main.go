//go:build js && wasm

// Command wasm is kubeplay in a browser tab: one sandbox on the browser store
// (SQLite WASM, saved in the origin private file system) and the whole site
// (UI and Kubernetes API), run in a Web Worker by static/worker.js and served
// to the page through the transport module static/kubeplay.js.
//
// The host (static/worker.js, in a Web Worker) must, before starting this
// program:
//   - set globalThis.sqlite3 to the initialised SQLite WASM module
//     (await sqlite3InitModule() from @sqlite.org/sqlite-wasm), which the
//     store uses;
//   - set globalThis[databaseGlobal] to the database to open: a file name in
//     SQLite's default VFS, or ":memory:";
//   - set globalThis[bootHook] to a function(err, engine) that this program
//     calls once: with an error message if it could not start, or with the
//     engine, an object whose methods are described on engine below;
//   - optionally, set globalThis[markHook] to a function(step) that this
//     program calls as each step of its start ends: "main" (its packages
//     initialised), "engine" (the store, the sandbox and the site open);
//   - to keep the emulated release across reloads, set the globals
//     described in emulation.go.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"syscall/js"

	"kubeplay/playground"
	"kubeplay/store"
	"kubeplay/website"
)

// bootHook is the global the host sets to learn that the engine started;
// databaseGlobal names the database; markHook learns when each step of the
// start ends.
const (
	bootHook       = "__kubeplayBoot"
	databaseGlobal = "__kubeplayDatabase"
	markHook       = "__kubeplayMark"
)

func main() {
	mark(js.Global(), "main")
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
		return fmt.Errorf("globalThis.%s is not a function: start this program with static/worker.js", bootHook)
	}
	db := global.Get(databaseGlobal)
	if db.Type() != js.TypeString {
		return fmt.Errorf("globalThis.%s is not a string: start this program with static/worker.js", databaseGlobal)
	}
	site, sb, err := open(ctx, global, db.String())
	if err != nil {
		hook.Invoke(err.Error(), js.Null())
		return err
	}
	mark(global, "engine")
	hook.Invoke(js.Null(), newEngine(site, func() { go sb.StartControllers() }, sb.Close).jsValue())
	return nil
}

// mark tells the host that step of the start ended, if it asked.
func mark(global js.Value, step string) {
	if f := global.Get(markHook); f.Type() == js.TypeFunction {
		f.Invoke(step)
	}
}

// open opens the store on database db and the sandbox, emulating the
// release the host kept, and returns the site to serve (the UI and API, and
// the page's command line, package cli, with neither the playground API
// nor the browser-mode files, which the page itself comes from) and the
// sandbox, whose controllers it leaves stopped. They live as long as the
// worker, which closes the sandbox before the page replaces it.
func open(ctx context.Context, global js.Value, db string) (http.Handler, *playground.Sandbox, error) {
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		return nil, nil, err
	}
	opts := playground.Options{Store: st, StartControllersLater: true}
	loadEmulation(global, &opts)
	sb, err := playground.Open(ctx, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	site := website.New(website.Options{Sandbox: keptSandbox{Sandbox: sb, save: global.Get(saveEmulationHook)}})
	return site, sb, nil
}
