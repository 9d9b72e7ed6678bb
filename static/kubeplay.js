// kubeplay.js: the transport between a page and the kubeplay engine, the Go
// program (dist/kubeplay.wasm) that serves the whole site — UI and Kubernetes
// API — on SQLite WASM, in a Web Worker (worker.js) so that the page stays
// responsive whatever the engine does.
//
// Importing this module starts the engine, registers the service worker that
// keeps the site working offline (sw.js), and sets window.kubeplay:
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
//                           step ended: sqlite (SQLite WASM loaded), download,
//                           compile (kubeplay.wasm), main (the Go program
//                           instantiated and its packages initialised),
//                           engine (the store, the sandbox and the site
//                           opened), start (the controllers' first passes
//                           done: the engine takes requests), firstAnswer.
//   kubeplay.worker         the Worker running the engine.
//   kubeplay.compiled       Promise: true when this page downloaded and
//                           compiled kubeplay.wasm, false when it took the
//                           Module another example of the same page compiled
//                           (see sharedModule).
//   kubeplay.storage        where the database lives: {kind: "opfs-sahpool"}
//                           (saved in the browser: it survives a reload) or
//                           {kind: "memory", reason}. A page whose <html> has
//                           data-kubeplay-storage="memory" (an embedded
//                           example, isolated from the others) asks for memory.
//   kubeplay.reset()        Promise: restart the engine on an empty database.
//   kubeplay.snapshot()     Promise of the database as an SQLite file (Blob).
//   kubeplay.restore(file)  Promise: restart the engine on an SQLite file
//                           (Blob or ArrayBuffer) that snapshot() made.
//   reset and restore fail the requests in flight; they fire a "restart"
//   event once the engine answers again.
//   kubeplay.WebSocket      WebSocket's client API, connected to the engine
//                           (the request log's live view): the same frames as
//                           the native server's WebSocket.
//   kubeplay.sockets(signal)
//                           kubeplay.WebSocket whose sockets close silently
//                           (no close event, so no reconnection) when signal
//                           aborts: for the scripts of a page that goes away
//                           (page.js sets kubeplay.WebSocket to one per page).

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

let engine = null; // the worker's engine once started: {serve, cancel, ack, send, export}
let stopped = null; // set to an Error if the Go program exits
let nextID = 1;
const inflight = new Set(); // of functions failing a request in flight with a reason
const wasmURL = new URL("kubeplay.wasm", dist);
let module = supported().then(sharedModule);
kubeplay.compiled = module.then(() => ownModule, () => false);
const memory = globalThis.document?.documentElement.dataset.kubeplayStorage === "memory";
let started = start({ memory }); // resolves to the engine
kubeplay.ready = started.then(async () => {
	await firstAnswer();
	kubeplay.timings.firstAnswer = performance.now();
	report("ready");
	return kubeplay;
});
kubeplay.ready.catch((err) => report("failed", 0, 0, err));
globalThis.kubeplay = kubeplay;
export default kubeplay;

// Offline use is a bonus: no service worker (an insecure origin, a private
// window) changes nothing else. The worker keeps the engine once it runs
// here (see sw.js). It is registered once the engine answers: its start and
// install (a fetch of the site's files) took the cores the engine's download
// and compilation need, ~0.1 s of a cold start's first answer.
kubeplay.ready.then(
	() => {
		globalThis.navigator?.serviceWorker?.register(new URL("sw.js", import.meta.url)).catch(() => {});
		return globalThis.navigator?.serviceWorker?.ready.then((r) => r.active?.postMessage("keep-engine"));
	},
	() => {},
);

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

// start starts a worker, which loads SQLite WASM and Go's runtime and opens
// the database with options (reset, snapshot: see worker.js) while the page
// downloads and compiles kubeplay.wasm, then runs the engine there and
// resolves to it.
async function start(options) {
	await supported();
	const t = kubeplay.timings;
	const first = kubeplay.worker === null;
	const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
	kubeplay.worker = worker;
	worker.postMessage({ type: "open", ...options });
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
				if (first) {
					for (const [step, at] of Object.entries(m.marks)) t[step] = at - performance.timeOrigin;
					t.start = m.at - performance.timeOrigin;
				}
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
	try {
		worker.postMessage({ type: "start", module: await module });
	} catch (err) {
		// A browser that cannot post this Module (another example's) to a
		// worker gets its own.
		if (err.name !== "DataCloneError" || ownModule) throw err;
		module = ownCompile();
		worker.postMessage({ type: "start", module: await module });
	}
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
		send(id, bytes) {
			worker.postMessage({ type: "send", id, bytes }, [bytes.buffer]);
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

// release asks worker to stop its engine and release the saved database,
// and resolves once it has, or after a few seconds: the files are then
// free for the worker that replaces it.
function release(worker) {
	return new Promise((resolve) => {
		const timer = setTimeout(resolve, 5000);
		worker.addEventListener("message", (e) => {
			if (e.data?.type !== "closed") return;
			clearTimeout(timer);
			resolve();
		});
		worker.postMessage({ type: "close" });
	});
}

// restart replaces the engine's worker by a new one started with options.
async function restart(options) {
	options.memory = memory;
	await kubeplay.ready.catch(() => {});
	const old = kubeplay.worker;
	engine = null;
	const reason = new DOMException("kubeplay: the engine restarted", "AbortError");
	for (const fail of inflight) fail(reason);
	if (old) await release(old);
	old?.terminate();
	started = start(options);
	try {
		await started;
	} catch (err) {
		if (!options.snapshot) throw err;
		// Not a database: the saved one is untouched; go back to it.
		await restart({});
		throw err;
	}
	await firstAnswer();
	kubeplay.dispatchEvent(new Event("restart"));
}

async function snapshot() {
	if (!engine) await started;
	const bytes = await engine.export();
	return new Blob([bytes], { type: "application/vnd.sqlite3" });
}

// shareKey names, on the window of a page that compiled kubeplay.wasm, the
// promise of its WebAssembly.Module.
const shareKey = "__kubeplayModule";
let ownModule = false; // this page compiles kubeplay.wasm itself

// sharedModule returns kubeplay.wasm compiled. A documentation page with
// several examples holds one iframe of embed.html each, of this origin:
// the first to get here compiles the engine and the others take its Module
// (the frames share an agent cluster, so their workers accept it), so the
// page downloads and compiles it once. Looking and publishing happen in one
// task, and same-origin frames share an event loop: two frames cannot both
// miss each other.
function sharedModule() {
	for (const w of siblings()) {
		let shared;
		try {
			shared = w[shareKey];
		} catch {} // a frame of another origin
		if (shared) return shared.catch(ownCompile);
	}
	return ownCompile();
}

function ownCompile() {
	ownModule = true;
	const m = compile(wasmURL);
	globalThis[shareKey] = m;
	return m;
}

// siblings returns the other frames of this frame's parent (none for a
// top-level page).
function siblings() {
	const out = [];
	try {
		if (globalThis.parent === undefined || parent === globalThis) return out;
		for (let i = 0; i < parent.frames.length; i++) if (parent.frames[i] !== globalThis) out.push(parent.frames[i]);
	} catch {} // a parent that hides its frames
	return out;
}

// compile downloads and compiles kubeplay.wasm as it arrives, reporting the
// bytes received.
//
// V8 caches the code it compiled for a module (so that the next visit skips
// most of the compilation) only when it compiled the browser's own Response
// of the file, as fetched: progress is counted on a clone. A server that
// does not say application/wasm gets a Response of ours, compiled as well
// but never cached.
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
	const progress = new TransformStream({
		transform(chunk, ctl) {
			loaded += chunk.byteLength;
			report("download", loaded, total);
			ctl.enqueue(chunk);
		},
		flush() {
			kubeplay.timings.download = performance.now();
			report("compile", loaded, loaded);
		},
	});
	let wasm;
	if (WebAssembly.compileStreaming && res.headers.get("Content-Type")?.split(";")[0].trim() === "application/wasm") {
		wasm = res;
		res.clone().body.pipeThrough(progress).pipeTo(new WritableStream()).catch(() => {}); // compileStreaming reports the error
	} else {
		wasm = new Response(res.body.pipeThrough(progress), { headers: { "Content-Type": "application/wasm" } });
	}
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

// EngineSocket is WebSocket's client API over the engine: an upgrade request
// that the engine's handler hijacks (wasm/internal/bridge), then RFC 6455
// frames, parsed here. Text and binary messages, ping/pong, close; no
// subprotocols or extensions (kubeplay's pages use none).
class EngineSocket extends EventTarget {
	static CONNECTING = 0;
	static OPEN = 1;
	static CLOSING = 2;
	static CLOSED = 3;

	#eng = null;
	#id = 0;
	#buf = new Uint8Array(0);
	#handshaken = false;
	#closeFrame = null; // {code, reason} the server sent
	#fragments = null; // {op, parts} of a message in pieces
	#silent = false; // abandoned: no more events

	constructor(url, protocols = undefined, signal = undefined) {
		super();
		this.url = String(url);
		this.protocol = "";
		this.extensions = "";
		this.binaryType = "arraybuffer";
		this.bufferedAmount = 0;
		this.readyState = EngineSocket.CONNECTING;
		this.onopen = this.onmessage = this.onerror = this.onclose = null;
		if (signal?.aborted) {
			this.#abandon();
			return;
		}
		signal?.addEventListener("abort", () => this.#abandon(), { once: true });
		this.#connect();
	}

	async #connect() {
		try {
			if (!engine) await started;
		} catch {
			this.#closed(1006, "", false);
			return;
		}
		if (this.readyState !== EngineSocket.CONNECTING) return;
		this.#eng = engine;
		this.#id = nextID++;
		const url = new URL(this.url, location.href);
		url.protocol = location.protocol; // the engine sees an HTTP request
		const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
		const headers = ["Upgrade", "websocket", "Connection", "Upgrade", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", key, "Origin", location.origin];
		inflight.add(this.#fail);
		this.#eng.serve(this.#id, "GET", url.href, headers, null, {
			head: (status) => {
				if (status !== 101) this.#fail(new Error(`kubeplay.WebSocket: ${this.url}: HTTP ${status}`));
			},
			chunk: (bytes) => {
				this.#eng.ack(this.#id, bytes.byteLength); // taken at once
				this.#receive(bytes);
			},
			end: () => {
				inflight.delete(this.#fail);
				const cf = this.#closeFrame;
				this.#closed(cf ? cf.code : 1006, cf ? cf.reason : "", !!cf);
			},
		});
	}

	#fail = () => {
		inflight.delete(this.#fail);
		if (this.readyState === EngineSocket.CLOSED) return;
		this.#eng?.cancel(this.#id);
		this.#emit(new Event("error"));
		this.#closed(1006, "", false);
	};

	#receive(bytes) {
		const buf = new Uint8Array(this.#buf.length + bytes.length);
		buf.set(this.#buf);
		buf.set(bytes, this.#buf.length);
		this.#buf = buf;
		if (!this.#handshaken) {
			const end = indexOfHeadEnd(buf);
			if (end < 0) return;
			const head = new TextDecoder().decode(buf.subarray(0, end));
			if (!/^HTTP\/1\.1 101 /.test(head)) return this.#fail();
			this.#handshaken = true;
			this.#buf = buf.subarray(end + 4);
			this.readyState = EngineSocket.OPEN;
			this.#emit(new Event("open"));
		}
		this.#frames();
	}

	// #frames handles the complete frames received.
	#frames() {
		for (;;) {
			const b = this.#buf;
			if (b.length < 2) return;
			let len = b[1] & 0x7f;
			let off = 2;
			if (len === 126) {
				if (b.length < 4) return;
				len = (b[2] << 8) | b[3];
				off = 4;
			} else if (len === 127) {
				if (b.length < 10) return;
				len = Number(new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0));
				off = 10;
			}
			if (b[1] & 0x80) return this.#fail(); // a server must not mask
			if (b.length < off + len) return;
			const fin = (b[0] & 0x80) !== 0;
			const op = b[0] & 0x0f;
			const payload = b.slice(off, off + len);
			this.#buf = b.subarray(off + len);
			if (op === 0 && this.#fragments) {
				this.#fragments.parts.push(payload);
				if (fin) {
					const { op: first, parts } = this.#fragments;
					this.#fragments = null;
					this.#message(first, new Uint8Array(parts.flatMap((p) => [...p])));
				}
			} else if (op === 1 || op === 2) {
				if (fin) this.#message(op, payload);
				else this.#fragments = { op, parts: [payload] };
			} else if (op === 8) {
				const code = payload.length >= 2 ? (payload[0] << 8) | payload[1] : 1005;
				this.#closeFrame = { code, reason: new TextDecoder().decode(payload.subarray(2)) };
				if (this.readyState === EngineSocket.OPEN) this.#send(8, payload.subarray(0, 2));
				this.readyState = EngineSocket.CLOSING;
			} else if (op === 9) {
				this.#send(10, payload);
			}
		}
	}

	#message(op, payload) {
		if (this.readyState !== EngineSocket.OPEN) return;
		const data = op === 1 ? new TextDecoder().decode(payload) : this.binaryType === "blob" ? new Blob([payload]) : payload.buffer;
		this.#emit(new MessageEvent("message", { data, origin: location.origin }));
	}

	// #send sends one masked frame, as a client must.
	#send(op, payload) {
		const len = payload.length;
		const head = len < 126 ? 2 : len < 65536 ? 4 : 10;
		const frame = new Uint8Array(head + 4 + len);
		frame[0] = 0x80 | op;
		if (len < 126) frame[1] = 0x80 | len;
		else if (len < 65536) {
			frame[1] = 0x80 | 126;
			frame[2] = len >> 8;
			frame[3] = len & 0xff;
		} else {
			frame[1] = 0x80 | 127;
			new DataView(frame.buffer).setBigUint64(2, BigInt(len));
		}
		const mask = crypto.getRandomValues(new Uint8Array(4));
		frame.set(mask, head);
		for (let i = 0; i < len; i++) frame[head + 4 + i] = payload[i] ^ mask[i & 3];
		this.#eng.send(this.#id, frame);
	}

	send(data) {
		if (this.readyState === EngineSocket.CONNECTING) throw new DOMException("Still in CONNECTING state.", "InvalidStateError");
		if (this.readyState !== EngineSocket.OPEN) return;
		if (typeof data === "string") this.#send(1, new TextEncoder().encode(data));
		else this.#send(2, new Uint8Array(ArrayBuffer.isView(data) ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : data));
	}

	close(code = 1000, reason = "") {
		if (this.readyState >= EngineSocket.CLOSING) return;
		if (this.readyState === EngineSocket.CONNECTING || !this.#handshaken) {
			this.#eng?.cancel(this.#id);
			this.#closed(1006, "", false);
			return;
		}
		this.readyState = EngineSocket.CLOSING;
		const r = new TextEncoder().encode(reason);
		const payload = new Uint8Array(2 + r.length);
		payload[0] = code >> 8;
		payload[1] = code & 0xff;
		payload.set(r, 2);
		this.#send(8, payload);
		// The server answers with its close frame and ends the exchange; a
		// server that does not is cut off.
		setTimeout(() => this.readyState !== EngineSocket.CLOSED && this.#eng.cancel(this.#id), 1000);
	}

	#abandon() {
		this.#silent = true;
		if (this.readyState !== EngineSocket.CLOSED && this.#eng) this.#eng.cancel(this.#id);
		this.readyState = EngineSocket.CLOSED;
		inflight.delete(this.#fail);
	}

	#closed(code, reason, wasClean) {
		if (this.readyState === EngineSocket.CLOSED) return;
		this.readyState = EngineSocket.CLOSED;
		this.#emit(new CloseEvent("close", { code, reason, wasClean }));
	}

	#emit(ev) {
		if (this.#silent) return;
		this.dispatchEvent(ev);
		this["on" + ev.type]?.call(this, ev);
	}
}

// indexOfHeadEnd returns where "\r\n\r\n" starts in b, or -1.
function indexOfHeadEnd(b) {
	for (let i = 0; i + 3 < b.length; i++) {
		if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
	}
	return -1;
}

kubeplay.WebSocket = EngineSocket;
kubeplay.sockets = (signal) =>
	class extends EngineSocket {
		constructor(url, protocols) {
			super(url, protocols, signal);
		}
	};
