// page.js: the browser-mode page. It shows the engine loading, then renders
// the engine's own UI pages (kubeplay.fetch("/")) into this document and keeps
// links and forms inside the engine. The engine's path is kept in the URL
// fragment ("#/?r=v1/configmaps"), so reloading and the history work.
//
// Stylesheets are inlined; scripts with a src run (fetched from the engine),
// with window.kubeplay.pageURL set to the engine URL of the page and
// window.kubeplay.WebSocket connected to the engine for as long as the page
// is shown (the request log's live view uses both). Inline scripts do not
// run.
//
// A bar at the bottom, kept across pages, says where the database lives and
// offers reset, snapshot download / upload (kubeplay.reset, snapshot,
// restore) and a permalink to the sandbox's objects (state.js). A page opened
// from such a permalink (#state=<encoded>) runs in memory (index.html says
// so before the engine starts), so the sandbox saved in this browser stays
// as it was, and starts with the link's objects.

import kubeplay from "./kubeplay.js";
import * as script from "./script.js";
import * as state from "./state.js";

const status = document.getElementById("kp-status");
const bar = document.getElementById("kp-progress");

const mb = (n) => (n / 1e6).toFixed(1);
const messages = {
	sqlite: () => "Loading SQLite…",
	download: ({ loaded, total }) =>
		total ? `Downloading the engine: ${mb(loaded)} / ${mb(total)} MB` : `Downloading the engine: ${mb(loaded)} MB`,
	compile: () => "Compiling the engine…",
	start: () => "Starting the cluster…",
	ready: () => "Ready.",
};

function showProgress(p) {
	if (!status || p.phase === "failed") return;
	status.textContent = messages[p.phase]?.(p) ?? "";
	if (p.phase === "download" && p.total) bar.value = Math.min(p.loaded / p.total, 1);
	else if (p.phase === "download") bar.removeAttribute("value"); // indeterminate
	else if (p.phase !== "sqlite") bar.value = 1;
}
showProgress(kubeplay.progress);
kubeplay.addEventListener("progress", (e) => showProgress(e.detail));

// The engine's origin is this page's: its links are root-relative paths.
const origin = location.origin;
let current = ""; // the engine path shown
let seq = 0; // the latest navigation; older ones give way
const styles = new Map(); // stylesheet path -> CSS text

const enginePath = () => decodeURI(location.hash.slice(1)) || "/";

function go(path) {
	if (path === enginePath()) render(path);
	else location.hash = encodeURI(path);
}

async function render(path, init = undefined) {
	const n = ++seq;
	let res, text;
	try {
		res = await kubeplay.fetch(path, { headers: { Accept: "text/html,*/*;q=0.8" }, ...init });
		text = await res.text();
	} catch (err) {
		if (n === seq) showRaw(init?.method ?? "GET", path, null, String(err));
		return;
	}
	if (n !== seq) return;
	current = new URL(res.url).pathname + new URL(res.url).search;
	if (!(res.headers.get("Content-Type") ?? "").startsWith("text/html")) {
		showRaw(init?.method ?? "GET", path, res, text);
		return;
	}
	const doc = new DOMParser().parseFromString(text, "text/html");
	await inlineStyles(doc);
	const scripts = await loadScripts(doc);
	if (n !== seq) return;
	leavePage();
	for (const old of document.head.querySelectorAll("[data-kp-page]")) old.remove();
	for (const s of doc.head.querySelectorAll("style")) {
		s.dataset.kpPage = "";
		document.head.append(document.adoptNode(s));
	}
	document.title = doc.title || "kubeplay";
	document.documentElement.lang = doc.documentElement.lang || "en";
	document.body.replaceWith(document.adoptNode(doc.body));
	document.body.append(consolePanel(), storageBar());
	scrollTo(0, 0);
	runScripts(scripts);
}

let pageLife = new AbortController(); // aborted when the shown page goes away

function leavePage() {
	pageLife.abort();
	pageLife = new AbortController();
	for (const s of document.querySelectorAll("script[data-kp-page]")) {
		URL.revokeObjectURL(s.src);
		s.remove();
	}
}

// loadScripts fetches the page's scripts that have a src (same origin) and
// removes every script from doc; it returns [{type, text}] in order.
async function loadScripts(doc) {
	const out = [];
	for (const s of doc.querySelectorAll("script")) {
		s.remove();
		const src = s.getAttribute("src");
		const url = src && new URL(src, origin + current);
		if (!url || url.origin !== origin) continue;
		const res = await kubeplay.fetch(url.pathname + url.search);
		if (res.ok) out.push({ type: s.type, text: await res.text() });
	}
	return out;
}

function runScripts(scripts) {
	kubeplay.pageURL = origin + current;
	kubeplay.WebSocket = kubeplay.sockets(pageLife.signal);
	for (const { type, text } of scripts) {
		const el = document.createElement("script");
		if (type) el.type = type;
		el.dataset.kpPage = "";
		el.src = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
		document.head.append(el);
	}
}

// inlineStyles replaces the page's same-origin stylesheet links, which name
// engine paths, by the engine's answer.
async function inlineStyles(doc) {
	for (const link of doc.querySelectorAll('link[rel~="stylesheet"][href]')) {
		const url = new URL(link.getAttribute("href"), origin + current);
		if (url.origin !== origin) continue;
		const key = url.pathname + url.search;
		if (!styles.has(key)) {
			const res = await kubeplay.fetch(key);
			styles.set(key, res.ok ? await res.text() : "");
		}
		const style = doc.createElement("style");
		style.textContent = styles.get(key);
		link.replaceWith(style);
		doc.head.append(style);
	}
}

// showRaw shows an answer that is not a page (an API link's JSON).
function showRaw(method, path, res, text) {
	const body = document.createElement("body");
	body.className = "kp-raw";
	const header = document.createElement("header");
	const home = Object.assign(document.createElement("a"), { href: "/", textContent: "kubeplay" });
	const line = document.createElement("code");
	line.textContent = `${method} ${path}` + (res ? ` → ${res.status} ${res.headers.get("Content-Type") ?? ""}` : "");
	header.append(home, line);
	const pre = document.createElement("pre");
	try {
		pre.textContent = JSON.stringify(JSON.parse(text), null, 2);
	} catch {
		pre.textContent = text;
	}
	body.append(header, pre, consolePanel(), storageBar());
	document.title = `${path} · kubeplay`;
	leavePage();
	document.body.replaceWith(body);
}

// The storage bar, built once and moved into each page shown.
let storagePanel = null;

function storageBar() {
	if (storagePanel) {
		updateStorage();
		return storagePanel;
	}
	storagePanel = document.createElement("aside");
	storagePanel.className = "kp-bar";
	storagePanel.setAttribute("aria-label", "Sandbox storage");
	storagePanel.innerHTML = `<strong class="kp-mode" title="kubeplay emulates the Kubernetes API server in this tab, with the rest of a cluster around it: kube-controller-manager's controllers act as on a real cluster; the nodes, the scheduler and the kubelets are simulated, so pods go through their lifecycle but no container runs.">Cluster simulated in this tab · no containers run</strong>
		<button type="button" data-kp-action="console" aria-expanded="false" title="Type kubectl commands or raw HTTP requests">Console</button>
		<span class="kp-storage" role="status"></span>
		<button type="button" data-kp-action="reset" title="Delete every object: start again from an empty cluster">Reset</button>
		<button type="button" data-kp-action="download" title="Save the database (an SQLite file) to your computer">Download snapshot</button>
		<label class="kp-upload" title="Replace the database by a snapshot downloaded before, or by the objects of a permalink too long for a link">Upload snapshot
		<input type="file" accept=".sqlite3,.db,.json,application/vnd.sqlite3,application/octet-stream,${state.fileType}" hidden></label>
		<button type="button" data-kp-action="permalink" title="A link to this sandbox's objects">Permalink</button>
		<span class="kp-share" role="status" hidden></span>`;
	storagePanel.addEventListener("click", (e) => {
		const action = e.target.closest?.("[data-kp-action]")?.dataset.kpAction;
		if (action === "reset" && confirm("Delete every object in this sandbox?")) busy("Resetting…", kubeplay.reset());
		if (action === "download") busy("Saving…", download());
		if (action === "console") toggleConsole(e.target);
		if (action === "permalink") busy("Reading the objects…", sharePermalink());
	});
	// The page ends above the bar however tall it wraps (a phone's window,
	// a permalink shown): its height is the page's bottom padding.
	new ResizeObserver(() => {
		document.documentElement.style.setProperty("--kp-bar-height", `${storagePanel.offsetHeight}px`);
	}).observe(storagePanel);
	storagePanel.querySelector("input[type=file]").addEventListener("change", (e) => {
		const file = e.target.files[0];
		e.target.value = "";
		if (file) busy("Loading the snapshot…", isState(file) ? loadState(file) : kubeplay.restore(file));
	});
	updateStorage();
	return storagePanel;
}

let working = false; // busy runs: the bar keeps its message, its buttons off

function updateStorage(message = "") {
	if (working && !message) return; // a page shown meanwhile (a reset's)
	const st = kubeplay.storage;
	const where =
		st?.kind === "opfs-sahpool"
			? "Saved in this browser: objects survive a reload."
			: `In memory only (${st?.reason ?? "not saved"}): a reload starts again.`;
	storagePanel.querySelector(".kp-storage").textContent = message || where;
	const saved = st?.kind === "opfs-sahpool";
	for (const el of storagePanel.querySelectorAll("button[data-kp-action=reset], button[data-kp-action=console], button[data-kp-action=permalink]")) el.disabled = false;
	for (const el of storagePanel.querySelectorAll("button[data-kp-action=download], .kp-upload input")) el.disabled = !saved;
	storagePanel.querySelector(".kp-upload").classList.toggle("kp-disabled", !saved);
}

// busy shows message while promise runs, then the storage again or the error.
async function busy(message, promise) {
	updateStorage(message);
	working = true;
	for (const el of storagePanel.querySelectorAll("button, input")) el.disabled = true;
	try {
		await promise;
		working = false;
		updateStorage();
	} catch (err) {
		working = false;
		updateStorage();
		storagePanel.querySelector(".kp-storage").textContent = err.message;
		console.error(err);
	}
}

function sharePermalink() {
	const el = storagePanel.querySelector(".kp-share");
	return state.share(el, (st) => new URL(`index.html#${stateKey}${st}`, location.href).href, (n) => `this sandbox's ${state.objects(n)}`);
}

// stateKey starts the fragment of a permalink to a state.
const stateKey = "state=";

const isState = (file) => file.type === state.fileType || file.name.endsWith(".json");

// loadState replaces the sandbox's objects by those of a state file.
async function loadState(file) {
	const st = JSON.parse(await file.text());
	await kubeplay.reset();
	await restoreState(st);
}

async function restoreState(st) {
	const problems = await state.restore(st, (done, total) => {
		storagePanel.querySelector(".kp-storage").textContent = `Restoring the objects: ${done} / ${total}…`;
	});
	if (problems.length) throw new Error(`Restored the objects but ${problems.length}: ${problems.join("; ")}`);
}

// The console: kubectl command lines (and raw requests) run by the engine's
// package cli (script.js); its requests show in the request log.
let consoleEl = null;
const typed = []; // the console's command history
let historyAt = 0;
let running = null; // AbortController of the command running

function consolePanel() {
	if (consoleEl) return consoleEl;
	consoleEl = document.createElement("section");
	consoleEl.className = "kp-console";
	consoleEl.hidden = true;
	consoleEl.setAttribute("aria-label", "Console");
	consoleEl.innerHTML = `<pre class="kp-out" aria-live="polite"></pre>
		<details class="kp-file"><summary>File for <code>-f</code> and request bodies</summary>
		<textarea spellcheck="false" rows="8" placeholder="apiVersion: v1&#10;kind: ConfigMap&#10;metadata:&#10;  name: demo&#10;data:&#10;  greeting: hello"></textarea></details>
		<form class="kp-line"><span aria-hidden="true">$ kubectl</span>
		<input name="command" autocomplete="off" spellcheck="false" aria-label="Command" placeholder="get configmaps  ·  apply --server-side -f x.yaml  ·  GET /api/v1/namespaces">
		<button type="submit">Run</button><button type="button" class="kp-stop" hidden>Stop</button></form>
		<p class="kp-note">Emulated kubectl: the commands learners type first, as HTTP requests to this sandbox; open Requests to see them.</p>`;
	const form = consoleEl.querySelector("form");
	const input = form.elements.command;
	form.addEventListener("submit", (e) => {
		e.preventDefault();
		const line = input.value.trim();
		if (!line) return;
		typed.push(line);
		historyAt = typed.length;
		input.value = "";
		runCommand(line);
	});
	input.addEventListener("keydown", (e) => {
		if (e.key !== "ArrowUp" && e.key !== "ArrowDown") return;
		e.preventDefault();
		historyAt = Math.max(0, Math.min(typed.length, historyAt + (e.key === "ArrowUp" ? -1 : 1)));
		input.value = typed[historyAt] ?? "";
	});
	consoleEl.querySelector(".kp-stop").addEventListener("click", () => running?.abort());
	return consoleEl;
}

function toggleConsole(button, open = consoleEl.hidden) {
	consoleEl.hidden = !open;
	button.setAttribute("aria-expanded", String(open));
	if (open) consoleEl.querySelector("input").focus();
}

// runScript runs an example script (?run= in the URL: "open in full
// playground" from an embedded example) in the console, step by step.
async function runScript(encoded) {
	toggleConsole(storagePanel.querySelector("[data-kp-action=console]"), true);
	const steps = script.parse(await script.decode(encoded));
	for (const { command, file } of steps) {
		consoleEl.querySelector("textarea").value = file;
		await runCommand(command);
	}
}

async function runCommand(line) {
	running?.abort();
	const ac = (running = new AbortController());
	const out = consoleEl.querySelector(".kp-out");
	const stop = consoleEl.querySelector(".kp-stop");
	const block = document.createElement("div");
	block.className = "kp-cmd";
	const prompt = document.createElement("b");
	prompt.textContent = `$ kubectl ${line}\n`;
	const text = document.createTextNode("");
	block.append(prompt, text);
	out.append(block);
	stop.hidden = false;
	try {
		const file = consoleEl.querySelector("textarea").value;
		await script.run(line, file, (chunk) => {
			text.appendData(chunk);
			out.scrollTop = out.scrollHeight;
		}, ac.signal);
	} catch (err) {
		if (err.name !== "AbortError") text.appendData(`error: ${err.message}\n`);
	} finally {
		if (running === ac) {
			running = null;
			stop.hidden = true;
		}
		block.classList.toggle("kp-failed", script.failed(text.data));
		out.scrollTop = out.scrollHeight;
	}
	refresh();
}

// refresh shows the current page again after a command, which may have
// changed what it lists; the request log is live already.
async function refresh() {
	if (enginePath().startsWith(requestLogPath) || running) return;
	await render(enginePath());
	if (!consoleEl.hidden) consoleEl.querySelector("input").focus();
}
const requestLogPath = "/ui/requests";

async function download() {
	const blob = await kubeplay.snapshot();
	const a = document.createElement("a");
	a.href = URL.createObjectURL(blob);
	a.download = `kubeplay-${new Date().toISOString().replace(/[:.]/g, "-")}.sqlite3`;
	a.click();
	setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// engineURL resolves a link or form target of the shown page, or returns null
// when it leaves the engine (another origin, or a fragment of this page).
function engineURL(href) {
	if (href === null || href.startsWith("#")) return null;
	const url = new URL(href, origin + current);
	return url.origin === origin ? url : null;
}

async function startUI() {
	addEventListener("hashchange", () => render(enginePath()));
	kubeplay.addEventListener("restart", () => render(enginePath()));
	document.addEventListener("click", onClick);
	document.addEventListener("submit", onSubmit);
	if (location.hash.startsWith("#" + stateKey)) {
		const encoded = location.hash.slice(1 + stateKey.length);
		history.replaceState(null, "", "#/");
		storageBar();
		await busy("Restoring the link's objects…", state.decode(encoded).then(restoreState));
	}
	await render(enginePath());
	const run = new URLSearchParams(location.search).get("run");
	if (run) runScript(run).catch((err) => console.error(err));
}

function onClick(e) {
	const a = e.target.closest?.("a[href]");
	if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
	if ((a.target && a.target !== "_self") || a.hasAttribute("download")) return;
	const url = engineURL(a.getAttribute("href"));
	if (!url) return;
	e.preventDefault();
	go(url.pathname + url.search);
}

function onSubmit(e) {
	const form = e.target;
	const method = (e.submitter?.getAttribute("formmethod") ?? form.getAttribute("method") ?? "get").toLowerCase();
	const url = engineURL(e.submitter?.getAttribute("formaction") ?? form.getAttribute("action") ?? current);
	if (e.defaultPrevented || !url || method === "dialog") return;
	e.preventDefault();
	const data = new FormData(form, e.submitter);
	if (method === "get") {
		url.search = new URLSearchParams(data).toString();
		go(url.pathname + url.search);
		return;
	}
	const multipart = (form.getAttribute("enctype") ?? "").toLowerCase() === "multipart/form-data";
	render(url.pathname + url.search, { method: method.toUpperCase(), body: multipart ? data : new URLSearchParams(data) }).then(() => {
		// Show where the answer came from, without fetching it again.
		if (enginePath() !== current) history.replaceState(null, "", "#" + encodeURI(current));
	});
}

kubeplay.ready.then(startUI, (err) => {
	document.documentElement.classList.add("kp-failed");
	bar?.remove();
	status.className = "kp-error";
	status.textContent = err.message;
	console.error(err);
});
