// kubeplay.js: the transport between a page and the kubeplay engine, the Go
// program (dist/kubeplay.wasm) that serves the whole site — UI and Kubernetes
// API — on SQLite WASM, in a Web Worker (worker.js) so that the page stays
// responsive whatever the engine does.
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
//   kubeplay.worker         the Worker running the engine.
//   kubeplay.storage        where the database lives: {kind: "opfs-sahpool"}
//                           (saved in the browser: it survives a reload) or
//                           {kind: "memory", reason}.
//   kubeplay.reset()        Promise: restart the engine on an empty database.
//   kubeplay.snapshot()     Promise of the database as an SQLite file (Blob).
//   kubeplay.restore(file)  Promise: restart the engine on an SQLite file
//                           (Blob or ArrayBuffer) that snapshot() made.
//   reset and restore fail the requests in flight; they fire a "restart"
//   event once the engine answers again.

const dist = new URL("dist/", import.meta.url);

const kubeplay = new EventTarget();
kubeplay.timings = {};
kubeplay.progress = { phase: "sqlite", loaded: 0, total: 0 };
kubeplay.fetch = fetchEngine;
kubeplay.storage = null;
kubeplay.worker = null;
kubeplay.reset = () => restart({ reset: true });
kubeplay.snapshot = snapshot;
kubeplay.restore = async (file) => restart({ snapshot: new Uint8Array(file instanceof Blob ? await file.arrayBuffer() : file) });

let engine = null; // the worker's engine once started: {serve, cancel, ack}
let stopped = null; // set to an Error if the Go program exits
let nextID = 1;
const inflight = new Set(); // of functions failing a request in flight with a reason
const module = supported().then(() => compile(new URL("kubeplay.wasm", dist)));
let started = start({}); // resolves to the engine
kubeplay.ready = started.then(async () => {
	await firstAnswer();
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

async function firstAnswer() {
	const res = await fetchEngine("/healthz");
	await res.arrayBuffer();
	if (!res.ok) throw new Error(`kubeplay: the engine answered /healthz with ${res.status}`);
}

async function supported() {
	if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function" || typeof Worker !== "function") {
		const err = new Error("This browser cannot run WebAssembly in a worker (or it is turned off), and kubeplay needs it.");
		err.name = "NotSupportedError";
		throw err;
	}
}

// start starts a worker, which loads SQLite WASM and Go's runtime while the
// page downloads and compiles kubeplay.wasm, then runs the engine there with
// options (reset, snapshot: see worker.js) and resolves to it.
async function start(options) {
	await supported();
	const t = kubeplay.timings;
	const first = kubeplay.worker === null;
	const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
	kubeplay.worker = worker;
	stopped = null;
	const requests = new Map(); // id -> the request's sink
	let onReady, onFailed, onSqlite, onExport;
	const ready = new Promise((resolve, reject) => ((onReady = resolve), (onFailed = reject)));
	let sqliteFailed;
	const sqlite = new Promise((resolve, reject) => ((onSqlite = resolve), (sqliteFailed = reject)));
	const stop = (reason) => {
		stopped = reason;
		onFailed(reason);
		sqliteFailed(reason);
		for (const fail of inflight) fail(reason);
	};
	worker.onerror = (e) => {
		e.preventDefault();
		stop(new Error(`kubeplay: the engine's worker failed: ${e.message || "cannot load worker.js"}`));
	};
	worker.onmessage = ({ data: m }) => {
		switch (m.type) {
			case "sqlite":
				if (first) t.sqlite = m.at - performance.timeOrigin;
				onSqlite();
				break;
			case "ready":
				kubeplay.storage = m.storage;
				if (first) t.start = m.at - performance.timeOrigin;
				onReady();
				break;
			case "failed":
				stop(new Error(m.message));
				break;
			case "exit":
				stop(new Error(`kubeplay: the engine stopped (exit code ${m.code}); reload the page`));
				break;
			case "exported":
			case "exportFailed":
				onExport?.(m);
				break;
			case "head":
				requests.get(m.id)?.head(m.status, m.headers);
				break;
			case "chunk":
				requests.get(m.id)?.chunk(m.bytes);
				break;
			case "end":
				requests.get(m.id)?.end(m.message);
				requests.delete(m.id);
				break;
		}
	};
	// On failure, report kubeplay.wasm's first: it tells a missing build apart.
	const settled = await Promise.allSettled([module, sqlite]);
	const failed = settled.find((r) => r.status === "rejected");
	if (failed) {
		worker.terminate();
		throw failed.reason;
	}
	if (first) report("start");
	worker.postMessage({ type: "start", module: await module, ...options });
	await ready;
	engine = {
		worker,
		serve(id, method, url, headers, body, sink) {
			requests.set(id, sink);
			worker.postMessage({ type: "serve", id, method, url, headers, body }, body ? [body.buffer] : []);
		},
		cancel(id) {
			requests.delete(id);
			worker.postMessage({ type: "cancel", id });
		},
		ack(id, bytes) {
			worker.postMessage({ type: "ack", id, bytes });
		},
		export() {
			return new Promise((resolve, reject) => {
				onExport = (m) => (m.type === "exported" ? resolve(m.bytes) : reject(new Error(m.message)));
				worker.postMessage({ type: "export" });
			});
		},
	};
	return engine;
}

// restart replaces the engine's worker by a new one started with options.
async function restart(options) {
	await kubeplay.ready.catch(() => {});
	const old = kubeplay.worker;
	engine = null;
	const reason = new DOMException("kubeplay: the engine restarted", "AbortError");
	for (const fail of inflight) fail(reason);
	old?.terminate();
	started = start(options);
	await started;
	await firstAnswer();
	kubeplay.dispatchEvent(new Event("restart"));
}

async function snapshot() {
	if (!engine) await started;
	const bytes = await engine.export();
	return new Blob([bytes], { type: "application/vnd.sqlite3" });
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
	const eng = engine; // a restart replaces engine

	return new Promise((resolve, reject) => {
		let settled = false; // the promise is resolved or rejected
		let done = false; // the engine called end, or the request was aborted
		let ctl = null; // the body stream's controller
		let unacked = 0; // body bytes received and not acknowledged to the worker

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
			eng.cancel(id);
		};
		signal.addEventListener("abort", onAbort);
		inflight.add(fail);

		// The sink receives the worker's messages for this request.
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
							// Called when the consumer has taken what was queued:
							// the worker may send that much more.
							pull() {
								if (unacked > 0 && !done) {
									eng.ack(id, unacked);
									unacked = 0;
								}
							},
							cancel() {
								finish();
								eng.cancel(id);
							},
						});
					}
					settled = true;
					resolve(new Response(stream, { status, headers: h }));
				} catch (err) {
					settled = true;
					reject(err);
					finish();
					eng.cancel(id);
				}
			},
			chunk(bytes) {
				if (done || !ctl) return;
				unacked += bytes.byteLength;
				try {
					ctl.enqueue(bytes);
				} catch {}
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
			eng.serve(id, req.method, req.url, headers, body, sink);
		} catch (err) {
			fail(stopped ?? err); // the worker has stopped
		}
	});
}
