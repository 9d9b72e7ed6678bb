// The live watch: events arrive over a WebSocket as rendered HTML (see
// web/watch/live.go). Pause holds new events back (and counts them), Resume
// shows them, Clear empties the list. After a disconnect the page
// reconnects, resuming from the last resourceVersion it saw; after 410 Gone
// it stops: that resourceVersion is too old, and the watch must start over.
const section = document.querySelector("section.watch");
const list = document.getElementById("events");
const state = document.getElementById("watch-state");
const pause = document.getElementById("pause");
let lastRV = "";
let paused = false;
let held = [];
let retry = 500;
let stopped = false;

// In browser mode the engine runs in the tab: window.kubeplay gives this
// page's URL and a WebSocket class carrying the same messages in memory (as
// for requests.js).
const inPage = globalThis.kubeplay?.WebSocket ? globalThis.kubeplay : null;
const here = new URL(inPage?.pageURL ?? location.href);
const Socket = inPage?.WebSocket ?? globalThis.WebSocket;

function connect() {
	const url = new URL("/ui/watch/live", here);
	url.protocol = here.protocol === "https:" ? "wss:" : "ws:";
	for (const [k, v] of here.searchParams) url.searchParams.set(k, v);
	if (lastRV) {
		// Resume: the initial state was already shown.
		url.searchParams.set("resourceVersion", lastRV);
		url.searchParams.delete("sendInitialEvents");
	}
	const ws = new Socket(url);
	window.kubeplayWatch = ws; // for tests and the console: the connection
	ws.onopen = () => {
		retry = 500;
		section.dataset.live = "on";
		show();
	};
	ws.onmessage = (msg) => receive(JSON.parse(msg.data));
	ws.onclose = () => {
		section.dataset.live = "off";
		if (stopped) return;
		show();
		setTimeout(connect, retry);
		retry = Math.min(retry * 2, 10000);
	};
}

function show() {
	let s = section.dataset.live === "on" ? "live" : stopped ? "stopped" : "reconnecting";
	if (lastRV) s += " · last resourceVersion " + lastRV;
	if (paused) s += " · paused, " + held.length + " held";
	state.textContent = s;
}

function receive(m) {
	if (m.resourceVersion && m.type !== "ERROR") lastRV = m.resourceVersion;
	if (m.type === "ERROR") {
		// 410 Gone, or a request the API refused: retrying cannot help.
		stopped = true;
	}
	const t = document.createElement("template");
	t.innerHTML = m.html;
	const li = t.content.firstElementChild;
	if (paused) held.push(li);
	else list.append(li);
	show();
}

pause.addEventListener("click", () => {
	paused = !paused;
	pause.textContent = paused ? "Resume" : "Pause";
	pause.setAttribute("aria-pressed", String(paused));
	if (!paused) {
		list.append(...held);
		held = [];
	}
	show();
});
document.getElementById("clear").addEventListener("click", () => {
	list.replaceChildren();
	held = [];
	show();
});

if (section.dataset.request) connect();
