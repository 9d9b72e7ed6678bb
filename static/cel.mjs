// cel.mjs: the host side of kubeplay's CEL module. The engine (dist/kubeplay.wasm)
// does not link CEL: package celeval asks for it through
// globalThis.__kubeplayCEL(op, request, authorize), which installCEL defines.
// The first call loads the module (dist/kubeplay-cel.wasm, built from
// wasm/cel) with its own Go runtime instance, in the same worker; later calls
// reuse it. A failed load is retried at the next call, so a request that
// needs CEL while offline fails (with why) and a later one, back online,
// succeeds.
//
// Used by worker.js in the browser and by wasm/node/run.mjs under Node.

// celGlobal is what celeval calls (server/celeval/remote_js.go); bootHook is
// what the module calls once started (wasm/cel/main.go).
const celGlobal = "__kubeplayCEL";
const bootHook = "__kubeplayCELBoot";

// installCEL defines globalThis.__kubeplayCEL. load returns (a Promise of)
// the module: a WebAssembly.Module or its bytes; Go's wasm_exec.js must have
// defined globalThis.Go by the time it resolves.
export function installCEL(load) {
	let module = null; // Promise of the module's {call}
	globalThis[celGlobal] = (op, request, authorize) => {
		module ??= start(load).catch((err) => {
			module = null;
			throw err;
		});
		return module.then((m) => m.call(op, request, authorize));
	};
}

async function start(load) {
	const code = await load();
	const go = new Go();
	let exitCode = 0;
	go.exit = (c) => (exitCode = c);
	const booted = new Promise((resolve) => (globalThis[bootHook] = resolve));
	const result = await WebAssembly.instantiate(code, go.importObject);
	const exited = go.run(result.instance ?? result).then(() => {
		throw new Error(`it stopped (exit code ${exitCode})`);
	});
	try {
		return await Promise.race([booted, exited]);
	} finally {
		delete globalThis[bootHook];
	}
}
