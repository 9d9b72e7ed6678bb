// kubeplay.js: the transport between a page and the kubeplay engine, the Go
// program (dist/kubeplay.wasm) that serves the whole site — UI and Kubernetes
// API — inside the tab, on SQLite WASM.
//
// Importing this module starts the engine and sets window.kubeplay:
//
//   kubeplay.ready          Promise: resolves (to kubeplay) once the engine
//                           has answered its first request; rejects with the
//                           reason it cannot start (e.g. no WebAssembly).
//   kubeplay.fetch(input, init)
//                           window.fetch's signature and Response, served by
//                           the engine: only the path and query of the URL
//                           matter ("/api/v1/namespaces"). Bodies stream (watch
//                           with ?watch=1), init.signal aborts, redirects are
//                           followed as init.redirect says.
//   kubeplay.progress       the latest progress: {phase, loaded, total}, with
//                           phase "sqlite", "download", "compile", "start",
//                           "ready" or "failed"; also sent as "progress"
//                           events (kubeplay is an EventTarget).
//   kubeplay.timings        milliseconds since navigation start at which each
//                           step ended (sqlite, download, compile, start,
//                           firstAnswer).

const dist = new URL("dist/", import.meta.url);

// bootHook is the global the Go program calls once started (wasm/main.go).
const bootHook = "__kubeplayBoot";

const kubeplay = new EventTarget();
kubeplay.timings = {};
kubeplay.progress = { phase: "sqlite", loaded: 0, total: 0 };
kubeplay.fetch = fetchEngine;

let engine = null; // the Go engine once started: {serve, cancel, resume}
let stopped = null; // set to an Error if the Go program exits
let nextID = 1;
const inflight = new Set(); // of functions failing a request in flight with a reason
const started = start(); // resolves to the engine
kubeplay.ready = started.then(async () => {
	const res = await fetchEngine("/healthz");
	await res.arrayBuffer();
	if (!res.ok) throw new Error(`kubeplay: the engine answered /healthz with ${res.status}`);
	kubeplay.timings.firstAnswer = performance.now();
	report("ready");
	return kubeplay;
});
kubeplay.ready.catch((err) => report("failed", 0, 0, err));
globalThis.kubeplay = kubeplay;
export default kubeplay;

function report(phase, loaded = 0, total = 0, error = undefined) {
	kubeplay.progress = { phase, loaded, total, error };
	kubeplay.dispatchEvent(new CustomEvent("progress", { detail: kubeplay.progress }));
}

// start loads SQLite WASM, Go's wasm_exec.js and kubeplay.wasm in parallel,
// then runs the Go program and waits for it to report the engine.
async function start() {
	if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
		const err = new Error("This browser cannot run WebAssembly (or it is turned off), and kubeplay needs it.");
		err.name = "NotSupportedError";
		throw err;
	}
	const t = kubeplay.timings;
	const sqlite = import(new URL("sqlite3.mjs", dist).href)
		.then((m) => m.default())
		.then((s) => ((t.sqlite = performance.now()), s));
	const goRuntime = loadScript(new URL("wasm_exec.js", dist));
	const module = compile(new URL("kubeplay.wasm", dist));
	// On failure, report kubeplay.wasm's first: it tells a missing build apart.
	const settled = await Promise.allSettled([module, goRuntime, sqlite]);
	const failed = settled.find((r) => r.status === "rejected");
	if (failed) throw failed.reason;
	const sqlite3 = settled[2].value;
	report("start");
	await painted(); // show "starting" before Go holds the thread

	// The store's browser driver (store/sqlite_js.go) looks for the module here.
	globalThis.sqlite3 = sqlite3;
	const go = new Go();
	let exitCode = 0;
	go.exit = (code) => (exitCode = code);
	const booted = new Promise((resolve, reject) => {
		globalThis[bootHook] = (err, eng) => (err ? reject(new Error(`kubeplay could not start: ${err}`)) : resolve(eng));
	});
	const instance = await WebAssembly.instantiate(await module, go.importObject);
	const exited = go.run(instance).then(() => {
		stopped = new Error(`kubeplay: the engine stopped (exit code ${exitCode}); reload the page`);
		for (const fail of inflight) fail(stopped);
		throw stopped;
	});
	try {
		engine = await Promise.race([booted, exited]);
	} finally {
		delete globalThis[bootHook];
	}
	exited.catch((err) => console.error(err.message));
	t.start = performance.now();
	return engine;
}

// compile downloads and compiles kubeplay.wasm as it arrives, reporting the
// bytes received.
async function compile(url) {
	const res = await fetch(url);
	if (!res.ok) {
		const hint = res.status === 404 ? " (this site has no browser build: run static/build.sh)" : "";
		throw new Error(`kubeplay: ${url.pathname}: HTTP ${res.status}${hint}`);
	}
	// Content-Length counts compressed bytes when the server compressed them,
	// and the stream below counts decoded ones: kubeplay's own server says how
	// many that will be; other hosts leave the total unknown.
	const length = res.headers.has("Content-Encoding") ? "X-Decoded-Content-Length" : "Content-Length";
	const total = Number(res.headers.get(length)) || 0;
	let loaded = 0;
	report("download", 0, total);
	const counted = res.body.pipeThrough(
		new TransformStream({
			transform(chunk, ctl) {
				loaded += chunk.byteLength;
				report("download", loaded, total);
				ctl.enqueue(chunk);
			},
			flush() {
				kubeplay.timings.download = performance.now();
				report("compile", loaded, loaded);
			},
		}),
	);
	// Our own Response, so the server's Content-Type does not matter.
	const wasm = new Response(counted, { headers: { "Content-Type": "application/wasm" } });
	const module = WebAssembly.compileStreaming
		? await WebAssembly.compileStreaming(wasm)
		: await WebAssembly.compile(await wasm.arrayBuffer());
	kubeplay.timings.compile = performance.now();
	return module;
}

function loadScript(url) {
	return new Promise((resolve, reject) => {
		const s = document.createElement("script");
		s.src = url.href;
		s.onload = resolve;
		s.onerror = () => reject(new Error(`kubeplay: cannot load ${url.pathname}`));
		document.head.append(s);
	});
}

// painted resolves after the next frame (or 50 ms, for a hidden tab).
function painted() {
	return new Promise((resolve) => {
		setTimeout(resolve, 50);
		requestAnimationFrame(() => setTimeout(resolve, 0));
	});
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

// fetchEngine is kubeplay.fetch.
async function fetchEngine(input, init = undefined) {
	let req = new Request(input, init);
	if (!engine) await started;
	const origin = new URL(req.url).origin;
	for (let hops = 0; ; hops++) {
		const res = await exchange(req);
		const location = res.headers.get("Location");
		if (!redirectStatuses.has(res.status) || location === null || req.redirect === "manual") {
			return withURL(res, req.url, hops > 0);
		}
		await res.body?.cancel();
		if (req.redirect === "error") throw new TypeError(`kubeplay.fetch: ${req.url} redirected`);
		if (hops >= 20) throw new TypeError("kubeplay.fetch: too many redirects");
		const next = new URL(location, req.url);
		if (next.origin !== origin) throw new TypeError(`kubeplay.fetch: redirect to another origin: ${next}`);
		// As fetch: 303 (and 301/302 after POST) become a GET without a body.
		const toGet = (res.status === 303 && req.method !== "HEAD") || ((res.status === 301 || res.status === 302) && req.method === "POST");
		const headers = new Headers(req.headers);
		if (toGet) for (const h of ["Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location"]) headers.delete(h);
		req = new Request(next, {
			method: toGet ? "GET" : req.method,
			headers,
			body: toGet || req.method === "GET" || req.method === "HEAD" ? null : await req.clone().arrayBuffer(),
			signal: req.signal,
			redirect: req.redirect,
		});
	}
}

// withURL sets the url and redirected of a Response built by exchange, as
// fetch would.
function withURL(res, url, redirected) {
	Object.defineProperty(res, "url", { value: url });
	Object.defineProperty(res, "redirected", { value: redirected });
	return res;
}

// exchange sends one request to the engine and resolves to its Response
// once the status and headers are in; the body streams after.
async function exchange(req) {
	if (stopped) throw stopped;
	const signal = req.signal;
	signal.throwIfAborted();
	const body = req.method === "GET" || req.method === "HEAD" ? null : new Uint8Array(await req.clone().arrayBuffer());
	const headers = [];
	req.headers.forEach((v, k) => headers.push(k, v));
	const id = nextID++;

	return new Promise((resolve, reject) => {
		let settled = false; // the promise is resolved or rejected
		let done = false; // the engine called end, or the request was aborted
		let ctl = null; // the body stream's controller
		let waiting = false; // the engine waits for resume(id)

		const finish = () => {
			done = true;
			signal.removeEventListener("abort", onAbort);
			inflight.delete(fail);
		};
		// fail ends the request with reason (before or after its head).
		const fail = (reason) => {
			if (done) return;
			finish();
			if (!settled) {
				settled = true;
				reject(reason);
			} else if (ctl) {
				try {
					ctl.error(reason);
				} catch {}
			}
		};
		const onAbort = () => {
			if (done) return;
			fail(signal.reason); // first: Go may end the request within cancel
			engine.cancel(id);
		};
		signal.addEventListener("abort", onAbort);
		inflight.add(fail);

		// The sink's methods must not throw (wasm/engine.go).
		const sink = {
			head(status, flat) {
				if (done) return;
				try {
					const h = new Headers();
					for (let i = 0; i + 1 < flat.length; i += 2) h.append(flat[i], flat[i + 1]);
					let stream = null;
					if (!nullBodyStatuses.has(status) && req.method !== "HEAD") {
						stream = new ReadableStream({
							start: (c) => void (ctl = c),
							pull() {
								if (waiting) {
									waiting = false;
									engine.resume(id);
								}
							},
							cancel() {
								finish();
								engine.cancel(id);
							},
						});
					}
					settled = true;
					resolve(new Response(stream, { status, headers: h }));
				} catch (err) {
					settled = true;
					reject(err);
					finish();
					engine.cancel(id);
				}
			},
			chunk(bytes) {
				if (done || !ctl) return true;
				try {
					ctl.enqueue(bytes);
				} catch {
					return true;
				}
				if (ctl.desiredSize > 0) return true;
				waiting = true;
				return false;
			},
			end(message) {
				if (done) return;
				finish();
				const err = message === null ? null : new TypeError(`kubeplay.fetch: ${message}`);
				if (!settled) {
					settled = true;
					reject(err ?? new TypeError("kubeplay.fetch: no answer"));
					return;
				}
				try {
					if (ctl) err ? ctl.error(err) : ctl.close();
				} catch {}
			},
		};
		try {
			engine.serve(id, req.method, req.url, headers, body, sink);
		} catch (err) {
			fail(stopped ?? err); // the Go program has exited
		}
	});
}
