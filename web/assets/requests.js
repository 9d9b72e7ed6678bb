// The request log's live updates: new entries and watch events arrive over a
// WebSocket as rendered HTML (see web/requests/live.go), and the copy
// buttons. Without JavaScript the page still shows the log as it was.
const log = document.getElementById("entries");
const section = document.querySelector("section.requests");
const state = document.getElementById("live-state");
let lastSeq = Number(section.dataset.lastSeq) || 0;
let retry = 500;

// Transport hook for kubeplay's browser mode (static/page.js), where this
// page is shown inside another document and the engine runs in the tab:
// window.kubeplay then gives this page's URL and a WebSocket class carrying
// the same messages in memory.
const inPage = globalThis.kubeplay?.WebSocket ? globalThis.kubeplay : null;
const here = new URL(inPage?.pageURL ?? location.href);
const Socket = inPage?.WebSocket ?? globalThis.WebSocket;

function connect() {
	const url = new URL("/ui/requests/live", here);
	url.protocol = here.protocol === "https:" ? "wss:" : "ws:";
	for (const [k, v] of here.searchParams) url.searchParams.set(k, v);
	url.searchParams.set("after", String(lastSeq));
	const ws = new Socket(url);
	ws.onopen = () => {
		retry = 500;
		section.dataset.live = "on";
	};
	ws.onmessage = (msg) => apply(JSON.parse(msg.data));
	ws.onclose = () => {
		section.dataset.live = "off";
		setTimeout(connect, retry);
		retry = Math.min(retry * 2, 10000);
	};
}

function fragment(html) {
	const t = document.createElement("template");
	t.innerHTML = html;
	return t.content.firstElementChild;
}

function apply(m) {
	lastSeq = Math.max(lastSeq, m.seq);
	if (m.hidden) {
		countHidden(m.hidden);
	} else if (m.html) {
		const el = fragment(m.html);
		const old = document.getElementById(el.id);
		if (old) {
			// Keep what the reader opened.
			const openOld = old.querySelectorAll("details");
			const openNew = el.querySelectorAll("details");
			openOld.forEach((d, i) => openNew[i] && (openNew[i].open = d.open));
			old.replaceWith(el);
		} else {
			insert(el);
		}
		document.getElementById("no-entries")?.remove();
		group();
	} else if (m.eventHTML) {
		const list = document.querySelector(`ol.events[data-seq="${m.seq}"]`);
		if (list && !list.querySelector(`li[data-index="${m.index}"]`)) list.append(fragment(m.eventHTML));
	}
}

// countHidden counts one more request the filter hides as sent by who
// ("controllers" or "ui"), so that none is hidden silently.
function countHidden(who) {
	const note = document.getElementById("hidden-" + who);
	if (!note) return;
	const n = (Number(note.dataset.count) || 0) + 1;
	note.dataset.count = String(n);
	note.querySelector(".count").textContent = String(n);
	const noun = note.querySelector(".noun");
	noun.textContent = n === 1 ? noun.dataset.one : noun.dataset.many;
	note.hidden = false;
}

// group draws the requests of one kubectl command together: an entry whose
// newer neighbour came from the same run joins it (no line between them).
function group() {
	for (const li of log.children) {
		const s = li.dataset.session;
		li.classList.toggle("same-command", !!s && li.previousElementSibling?.dataset.session === s);
	}
}

// insert keeps the list newest first.
function insert(el) {
	const seq = Number(el.dataset.seq);
	for (const li of log.children) {
		if (Number(li.dataset.seq) < seq) {
			li.before(el);
			return;
		}
	}
	log.append(el);
}

document.addEventListener("click", async (e) => {
	const button = e.target.closest("button.copy");
	if (!button) return;
	try {
		await navigator.clipboard.writeText(button.dataset.copy);
		button.textContent = "copied";
	} catch {
		button.textContent = "select and copy";
	}
	setTimeout(() => (button.textContent = "copy"), 1500);
});

group();
if (inPage || ("WebSocket" in window && location.protocol.startsWith("http"))) connect();
else if (state) state.textContent += " (not live here)";
