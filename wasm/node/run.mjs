// Runs a GOOS=js GOARCH=wasm binary (a program, or a test binary from
// `go test -exec`) under Node, as Go's $GOROOT/lib/wasm/wasm_exec_node.js
// does, after first initialising SQLite WASM and publishing it as
// globalThis.sqlite3, where the store's browser driver looks for it.
//
// Usage: node run.mjs <binary.wasm> [args...]  (GOROOT in the environment,
// else `go env GOROOT`). Go's wasm_exec.js is loaded from GOROOT, so it always
// matches the toolchain that built the binary.
//
// The engine's CEL module (wasm/cel), which the browser's worker loads on
// first use, is loaded here the same way (static/cel.mjs) from the file
// KUBEPLAY_CEL_WASM names (`go tool task test:wasm` builds it); without it, a
// request that needs CEL fails as in a browser that cannot download it.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

import { installCEL } from "../../static/cel.mjs";

if (process.argv.length < 3) {
	console.error("usage: run.mjs <binary.wasm> [arguments]");
	process.exit(1);
}
const wasmFile = process.argv[2];
const goroot = process.env.GOROOT || execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();

// What wasm_exec_node.js sets up for wasm_exec.js: Node's fs and path give the
// Go program the real file system (t.TempDir, testdata).
const require = createRequire(import.meta.url);
globalThis.require = require;
globalThis.fs = fs;
globalThis.path = path;
require(path.join(goroot, "lib", "wasm", "wasm_exec.js"));
installCEL(() => {
	const file = process.env.KUBEPLAY_CEL_WASM;
	if (!file) return Promise.reject(new Error("KUBEPLAY_CEL_WASM is not set"));
	return fs.promises.readFile(file);
});

let sqlite3InitModule;
try {
	({ default: sqlite3InitModule } = await import("@sqlite.org/sqlite-wasm"));
} catch (err) {
	console.error(`${err.message}\n(run "npm ci" at the repository root)`);
	process.exit(1);
}

try {
	globalThis.sqlite3 = await sqlite3InitModule();

	const go = new Go();
	go.argv = process.argv.slice(2);
	go.env = Object.assign({ TMPDIR: os.tmpdir() }, process.env);
	go.exit = process.exit;
	const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmFile), go.importObject);
	process.on("exit", (code) => {
		// Node exits when no event is pending: if Go has not exited, every
		// goroutine is blocked. Resume it so that it reports the deadlock.
		if (code === 0 && !go.exited) {
			go._pendingEvent = { id: 0 };
			go._resume();
		}
	});
	await go.run(instance);
} catch (err) {
	console.error(err);
	process.exit(1);
}
