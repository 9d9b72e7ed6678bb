// worker.js: the kubeplay engine off the page's main thread. kubeplay.js
// starts this module worker, which loads SQLite WASM and Go's runtime, opens
// the database, runs dist/kubeplay.wasm (compiled by the page and posted here)
// and relays requests and answers as messages:
//
// page -> worker
//   {type: "open", reset, snapshot, memory}
//                       open the database the engine is to run on, while
//                       the page still downloads and compiles the engine;
//                       reset: empty the saved database first; snapshot: an
//                       SQLite file (Uint8Array) to replace it with first;
//                       memory: use a database in memory, not the saved one.
//                       A new database, saved or in memory, starts as
//                       dist/bootstrap.sqlite3.
//   {type: "start", module}   run the engine on the database opened
//   {type: "close"}   stop the engine and release the database, then
//                     answer {type: "closed"}: this worker is replaced
//   {type: "serve", id, method, url, headers, body}   wasm/engine.go's serve
//   {type: "cancel", id}
//   {type: "send", id, bytes}
//                       bytes for request id once its handler switched
//                       protocols (status 101: a WebSocket)
//   {type: "ack", id, bytes}
//                       the page's consumer took bytes of request id's body:
//                       the engine may send that many more (flow control).
//   {type: "export"}    reply {type: "exported", bytes} (or "exportFailed").
// worker -> page
//   {type: "sqlite", at}                     SQLite WASM is loaded
//   {type: "ready", storage, at, marks}      the engine runs; storage says
//                                            where the database lives, marks
//                                            when the engine's steps ended
//                                            ({main, engine}, as at)
//   {type: "failed", message}                it cannot start
//   {type: "head"|"chunk"|"end", id, ...}    the sink's calls, as messages
//   {type: "exit", code}                     the Go program ended
//
// The database lives in the origin private file system through SQLite WASM's
// "opfs-sahpool" VFS, rather than its "opfs" VFS: that one needs
// SharedArrayBuffer, so COOP/COEP headers that plain static hosts (and the
// docs sites that embed kubeplay) cannot send, and is slower. The price is one
// tab at a time: a second tab of the same site finds the files locked and
// runs on a database in memory, and says so.
//
// Beside the saved database, in the origin private file system's root, the
// worker keeps the sandbox's emulated Kubernetes release and feature gates
// (emulationFile: JSON the engine hands over whenever the UI switches them),
// so that a reload emulates the same release (wasm/emulation.go); a reset or
// a snapshot keeps it, as a playground sandbox's do. A sandbox in memory
// keeps none.
//
// CEL (CRD validation rules, admission policies) is a second module,
// dist/kubeplay-cel.wasm, which this worker downloads, compiles and starts
// only when the engine first needs it (cel.mjs), then keeps.

import { installCEL } from "./cel.mjs";

const dist = new URL("dist/", import.meta.url);

// bootHook is the global the Go program calls once started (wasm/main.go);
// databaseGlobal names the database it opens; it calls markHook as its
// steps end.
const bootHook = "__kubeplayBoot";
const databaseGlobal = "__kubeplayDatabase";
const markHook = "__kubeplayMark";
const vfsName = "kubeplay";
const dbFile = "/kubeplay.sqlite3";
const emulationGlobal = "__kubeplayEmulation";
const saveEmulationHook = "__kubeplaySaveEmulation";
const emulationFile = "kubeplay-emulation.json";

// flowWindow is how many body bytes of one request may wait in the page
// unconsumed before the engine pauses that request.
const flowWindow = 1 << 20;

const at = () => performance.timeOrigin + performance.now();

let engine = null; // wasm/engine.go's engine once started
let opened = null; // open's promise, from the "open" message on
let pool = null; // the opfs-sahpool VFS's utilities, when the database is saved
const requests = new Map(); // id -> {sent, paused}
const early = []; // messages before the engine started

const sqlite = import(new URL("sqlite3.mjs", dist).href)
	.then((m) => m.default())
	.then((s) => {
		postMessage({ type: "sqlite", at: at() });
		return s;
	});
const goRuntime = import(new URL("wasm_exec.js", dist).href);
// The database a new saved sandbox starts from: the engine then finds the
// objects every cluster starts with rather than making them, seconds of
// work in WebAssembly (static/internal/bootstrapdb). null without it (a
// build that lacks it): the engine makes them.
const bootstrapDB = fetch(new URL("bootstrap.sqlite3", dist))
	.then((res) => (res.ok ? res.arrayBuffer() : null))
	.catch(() => null);
installCEL(async () => {
	const url = new URL("kubeplay-cel.wasm", dist);
	let res;
	try {
		res = await fetch(url);
	} catch (err) {
		throw new Error(`cannot fetch ${url}: ${err.message ?? err}`);
	}
	if (!res.ok) throw new Error(`cannot fetch ${url}: ${res.status} ${res.statusText}`);
	// Compiled as it arrives, whatever Content-Type the host sent.
	const wasm = new Response(res.body, { headers: { "Content-Type": "application/wasm" } });
	const compiled = WebAssembly.compileStreaming ? WebAssembly.compileStreaming(wasm) : wasm.arrayBuffer().then((b) => WebAssembly.compile(b));
	const [module] = await Promise.all([compiled, goRuntime]);
	return module;
});
Promise.all([sqlite, goRuntime]).catch((err) =>
	postMessage({ type: "failed", message: `kubeplay: cannot load SQLite WASM or Go's runtime: ${err.message ?? err}` }),
);

onmessage = (e) => {
	const m = e.data;
	if (m.type === "close") {
		closeEngine();
	} else if (m.type === "open") {
		opened = open(m);
		opened.catch(() => {}); // start reports it
	} else if (m.type === "start") {
		start(m).catch((err) => postMessage({ type: "failed", message: err.message ?? String(err) }));
	} else if (!engine) {
		early.push(m);
	} else {
		handle(m);
	}
};

function handle(m) {
	switch (m.type) {
		case "serve":
			requests.set(m.id, { sent: 0, paused: false });
			engine.serve(m.id, m.method, m.url, m.headers, m.body, sink(m.id));
			break;
		case "cancel":
			requests.delete(m.id);
			engine.cancel(m.id);
			break;
		case "send":
			engine.receive(m.id, m.bytes);
			break;
		case "ack": {
			const r = requests.get(m.id);
			if (!r) break;
			r.sent -= m.bytes;
			if (r.paused && r.sent < flowWindow) {
				r.paused = false;
				engine.resume(m.id);
			}
			break;
		}
		case "export":
			exportDatabase();
			break;
	}
}

// closeEngine stops the engine and releases the saved database's files,
// then says so: the worker that replaces this one opens them at once,
// where a worker terminated while its engine works holds them for seconds.
function closeEngine() {
	const done = (err) => {
		if (err) console.warn(`kubeplay: closing the engine: ${err}`);
		try {
			pool?.pauseVfs();
		} catch (err) {
			console.warn(`kubeplay: releasing the database: ${err.message ?? err}`);
		}
		postMessage({ type: "closed" });
	};
	if (engine) engine.close(done);
	else done(null);
}

// sink forwards the engine's answer to request id to the page.
function sink(id) {
	return {
		head(status, headers) {
			postMessage({ type: "head", id, status, headers });
		},
		chunk(bytes) {
			const r = requests.get(id);
			if (!r) return true; // cancelled: the engine is about to stop
			r.sent += bytes.byteLength; // before the transfer empties it
			postMessage({ type: "chunk", id, bytes }, [bytes.buffer]);
			if (r.sent < flowWindow) return true;
			r.paused = true;
			return false;
		},
		end(message) {
			requests.delete(id);
			postMessage({ type: "end", id, message });
		},
	};
}

// open readies the database the engine is to run on and the emulation kept
// with it, and resolves to {sqlite3, storage, database, emulation}.
async function open({ reset, snapshot, memory }) {
	const sqlite3 = await sqlite;
	const storage = memory ? { kind: "memory", reason: "this page's own: the sandbox saved in this browser is untouched" } : await openStorage(sqlite3, reset, snapshot);
	if (storage.kind === "memory") return { sqlite3, storage, database: await memoryDatabase(sqlite3) };
	return { sqlite3, storage, database: dbFile, emulation: await loadEmulation() };
}

async function start({ module }) {
	if (!opened) throw new Error("kubeplay: the engine's worker was told to start before opening its database");
	const [{ sqlite3, storage, database, emulation }] = await Promise.all([opened, goRuntime]);
	// The store's browser driver (store/sqlite_js.go) looks for the module here.
	globalThis.sqlite3 = sqlite3;
	globalThis[databaseGlobal] = database;
	if (storage.kind !== "memory") {
		globalThis[emulationGlobal] = emulation;
		globalThis[saveEmulationHook] = saveEmulation;
	}
	const go = new Go();
	let exitCode = 0;
	go.exit = (code) => (exitCode = code);
	const booted = new Promise((resolve, reject) => {
		globalThis[bootHook] = (err, eng) => (err ? reject(new Error(`kubeplay could not start: ${err}`)) : resolve(eng));
	});
	const marks = {};
	globalThis[markHook] = (step) => (marks[step] = at());
	const instance = await WebAssembly.instantiate(module, go.importObject);
	const exited = go.run(instance).then(() => {
		postMessage({ type: "exit", code: exitCode });
		throw new Error(`kubeplay: the engine stopped (exit code ${exitCode})`);
	});
	try {
		engine = await Promise.race([booted, exited]);
	} finally {
		delete globalThis[bootHook];
	}
	postMessage({ type: "ready", storage, at: at(), marks });
	for (const m of early.splice(0)) handle(m);
}

// openStorage installs the opfs-sahpool VFS as SQLite's default, applying a
// reset or a snapshot, and returns where the database lives: {kind:
// "opfs-sahpool"}, or {kind: "memory", reason} when it cannot be saved.
async function openStorage(sqlite3, reset, snapshot) {
	if (typeof sqlite3.installOpfsSAHPoolVfs !== "function" || !globalThis.FileSystemHandle) {
		if (snapshot) throw new Error("this browser cannot save databases (no origin private file system), so it cannot load a snapshot");
		return { kind: "memory", reason: "this browser has no origin private file system" };
	}
	let lastErr = null;
	// A worker just terminated (reset, upload) may still hold the files for a
	// moment.
	for (let attempt = 0; attempt < 20; attempt++) {
		try {
			pool = await sqlite3.installOpfsSAHPoolVfs({ name: vfsName, clearOnInit: !!reset });
			break;
		} catch (err) {
			lastErr = err;
			await new Promise((r) => setTimeout(r, 100));
		}
	}
	if (!pool) {
		if (snapshot) throw new Error(`cannot load the snapshot: ${lastErr?.message}`);
		return { kind: "memory", reason: "another tab of this site holds the saved database" };
	}
	if (snapshot) pool.importDb(dbFile, snapshot);
	else if (!pool.getFileNames().includes(dbFile)) {
		const initial = await bootstrapDB;
		if (initial) pool.importDb(dbFile, new Uint8Array(initial));
	}
	const capi = sqlite3.capi;
	capi.sqlite3_vfs_register(capi.sqlite3_vfs_find(vfsName), 1);
	return { kind: "opfs-sahpool" };
}

// loadEmulation returns the emulation kept (JSON), or undefined if none is.
async function loadEmulation() {
	try {
		const root = await navigator.storage.getDirectory();
		const file = await (await root.getFileHandle(emulationFile)).getFile();
		return await file.text();
	} catch (err) {
		if (err.name !== "NotFoundError") console.warn(`kubeplay: cannot read the emulated release kept: ${err.message ?? err}`);
		return undefined;
	}
}

// saving is the latest save of the emulation: each waits for the one before,
// since a file has one sync access handle at a time.
let saving = Promise.resolve();

// saveEmulation keeps json (the engine calls it after each switch) through a
// sync access handle, the writing API every browser has in workers.
function saveEmulation(json) {
	saving = saving
		.then(async () => {
			const root = await navigator.storage.getDirectory();
			const handle = await (await root.getFileHandle(emulationFile, { create: true })).createSyncAccessHandle();
			try {
				const bytes = new TextEncoder().encode(json);
				handle.truncate(0);
				handle.write(bytes, { at: 0 });
				handle.flush();
			} finally {
				handle.close();
			}
		})
		.catch((err) => console.warn(`kubeplay: cannot keep the emulated release: ${err.message ?? err}`));
}

// memoryDatabase returns the name of a database in memory for the engine,
// filled with bootstrapDB when there is one. SQLite's "memdb" VFS shares a
// database named "/..." among the connections that open it, for as long as
// one is open: this worker copies bootstrapDB into it through a connection of
// its own, which it never closes, and the engine opens the same name.
async function memoryDatabase(sqlite3) {
	const initial = await bootstrapDB;
	if (!initial) return ":memory:";
	const capi = sqlite3.capi;
	capi.sqlite3_vfs_register(capi.sqlite3_vfs_find("memdb"), 1);
	const db = new sqlite3.oo1.DB(dbFile, "c");
	db.exec("ATTACH ':memory:' AS boot");
	const bytes = new Uint8Array(initial);
	const p = sqlite3.wasm.allocFromTypedArray(bytes);
	const flags = capi.SQLITE_DESERIALIZE_FREEONCLOSE | capi.SQLITE_DESERIALIZE_RESIZEABLE;
	db.checkRc(capi.sqlite3_deserialize(db.pointer, "boot", p, bytes.length, bytes.length, flags));
	db.transaction(() => {
		for (const sql of db.selectValues("SELECT sql FROM boot.sqlite_master WHERE sql NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index'")) {
			db.exec(sql);
		}
		for (const table of db.selectValues("SELECT name FROM boot.sqlite_master WHERE type = 'table'")) {
			// Copying kv's rows wrote its sequence already: the original's
			// replaces it.
			if (table === "sqlite_sequence") db.exec("DELETE FROM main.sqlite_sequence");
			db.exec(`INSERT INTO main."${table}" SELECT * FROM boot."${table}"`);
		}
		db.exec(`PRAGMA main.user_version = ${Number(db.selectValue("PRAGMA boot.user_version"))}`);
	});
	db.exec("DETACH boot");
	return dbFile;
}

// exportDatabase posts the saved database file. With SQLite's rollback
// journal the file holds every committed transaction; the engine's are short
// and run while this message waits, so it sees them whole.
function exportDatabase() {
	try {
		if (!pool) throw new Error("the database is in memory, not saved");
		const bytes = pool.exportFile(dbFile);
		postMessage({ type: "exported", bytes }, [bytes.buffer]);
	} catch (err) {
		postMessage({ type: "exportFailed", message: err.message ?? String(err) });
	}
}
