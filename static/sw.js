// sw.js: the service worker that keeps the browser mode working offline.
// Network first: every file is fetched as usual (the server's ETags make
// revalidation cheap), so a new release replaces the cached copy at the next
// visit online; the copy is written only when its ETag changed (the engine
// is tens of megabytes). Offline, the cached copy answers.

const cacheName = "kubeplay";

// files are the site's, cached at install: the first visit fetched them
// before this worker controlled the page.
const files = ["./", "index.html", "boot.css", "page.js", "kubeplay.js", "worker.js", "cel.mjs", "script.js", "state.js", "embed.html", "example.js",
	"embed.js", "dist/wasm_exec.js", "dist/sqlite3.mjs", "dist/sqlite3.wasm", "dist/bootstrap.sqlite3"];

// engine is the engine, cached once the page that installed this worker
// has it (kubeplay.js posts "keep-engine"), not at install, while that page
// still downloads it: the second download at once cost bandwidth, and in a
// fresh or private browser context, where Chromium shares one HTTP cache
// entry between the two, failing the worker's copy (over the storage quota)
// failed the page's ("WebAssembly compilation aborted: Network error").
const engine = "dist/kubeplay.wasm";
// modules are the engine and its CEL module. The CEL module is kept when the
// engine first needs it and fetches it, not before: most visits never need
// it, and downloading it anyway would double a first visit's download. So CEL
// works offline once it was used online.
const modules = [engine, "dist/kubeplay-cel.wasm"];
self.addEventListener("install", (e) => {
	self.skipWaiting();
	e.waitUntil(caches.open(cacheName).then((cache) => cache.addAll(files)));
});
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("message", (e) => {
	if (e.data !== "keep-engine") return;
	const req = new Request(new URL(engine, self.registration.scope));
	e.waitUntil(fetch(req).then((res) => res.status === 200 && keep(req, res)).catch(() => {}));
});
self.addEventListener("fetch", (e) => {
	const req = e.request;
	if (req.method !== "GET" || !req.url.startsWith(self.registration.scope)) return;
	const path = new URL(req.url).pathname;
	const network = modules.some((file) => new URL(file, self.registration.scope).pathname === path) ? engineFromNetwork : fromNetwork;
	e.respondWith(network(req).catch(() => fromCache(req)));
});

async function fromNetwork(req) {
	const res = await fetch(req);
	if (res.status === 200) keep(req, res.clone());
	return res;
}

// engineFromNetwork answers a module of the engine with the copy kept when
// the server says it is current (304 to its ETag), else as fromNetwork. Chromium keeps the code it
// compiled from a Response that a service worker took from the Cache Storage
// beside that copy, and skips compiling it at the next visit, but not for a
// Response the worker fetched.
async function engineFromNetwork(req) {
	const cache = await caches.open(cacheName);
	const kept = await cache.match(req, { ignoreSearch: true });
	const etag = kept?.headers.get("ETag");
	if (!etag) return fromNetwork(req);
	const res = await fetch(new Request(req, { headers: { "If-None-Match": etag } }));
	if (res.status === 304) return kept;
	if (res.status === 200) keep(req, res.clone());
	return res;
}

// keep stores res for req unless the cache holds the same version.
async function keep(req, res) {
	const cache = await caches.open(cacheName);
	const old = await cache.match(req, { ignoreSearch: true });
	const etag = res.headers.get("ETag");
	if (old && etag && old.headers.get("ETag") === etag) return;
	await cache.put(stripSearch(req), res);
}

async function fromCache(req) {
	const cache = await caches.open(cacheName);
	return (await cache.match(req, { ignoreSearch: true })) ?? Response.error();
}

// stripSearch keys pages by path: index.html?run=... is index.html.
const stripSearch = (req) => {
	const url = new URL(req.url);
	url.search = "";
	return url.href;
};
