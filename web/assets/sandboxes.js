// The sandboxes page's scenario runs: a Run form posts to the playground
// API's run endpoint (a built-in's name, or a scenario of the visitor's), whose answer is one JSON object a line, a step result
// as each step ends, then {"passed": ...}; each is shown as it arrives.
// Everything from the API is set as text, never as markup.
const result = document.querySelector("section.run-result");
const steps = result.querySelector(".run-steps");
const state = result.querySelector(".run-state");

for (const form of document.querySelectorAll("form.run")) {
	form.addEventListener("submit", (ev) => {
		ev.preventDefault();
		const name = new FormData(form).get("builtin");
		run(form.dataset.id, name, `?builtin=${encodeURIComponent(name)}`, undefined, form.querySelector("button"));
	});
}
document.querySelector("form.run-own")?.addEventListener("submit", (ev) => {
	ev.preventDefault();
	const data = new FormData(ev.target);
	const yaml = data.get("yaml");
	const name = /^name:\s*(.+)$/m.exec(yaml)?.[1] ?? "(yours)";
	run(data.get("id"), name, "", yaml, ev.target.querySelector("button"));
});

function el(tag, className, text) {
	const e = document.createElement(tag);
	if (className) e.className = className;
	if (text !== undefined) e.textContent = text;
	return e;
}

// run runs a built-in scenario (query ?builtin=) or the YAML body in the
// sandbox id.
async function run(id, name, query, yaml, button) {
	result.hidden = false;
	result.dataset.state = "running";
	result.querySelector(".run-name").textContent = name;
	result.querySelector(".run-sandbox").textContent = id;
	result.querySelector(".run-description").textContent =
		document.querySelector(`dd[data-scenario="${CSS.escape(name)}"]`)?.textContent ?? "";
	state.textContent = "running…";
	steps.replaceChildren();
	button.disabled = true;
	try {
		const resp = await fetch(`/playground/v1/sandboxes/${encodeURIComponent(id)}/run${query}`,
			{ method: "POST", headers: yaml ? { "Content-Type": "application/yaml" } : {}, body: yaml });
		if (!resp.ok) {
			const body = await resp.json().catch(() => ({}));
			throw new Error(body.error?.message ?? `${resp.status} ${resp.statusText}`);
		}
		const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
		let buf = "";
		for (;;) {
			const { value, done } = await reader.read();
			if (done) break;
			buf += value;
			let nl;
			while ((nl = buf.indexOf("\n")) >= 0) {
				const line = buf.slice(0, nl).trim();
				buf = buf.slice(nl + 1);
				if (line) show(JSON.parse(line));
			}
		}
	} catch (err) {
		finish(false, err.message);
	} finally {
		button.disabled = false;
	}
}

// show adds one line of the run's answer.
function show(msg) {
	if (!("step" in msg)) {
		finish(msg.passed, msg.error);
		return;
	}
	const ok = !msg.failures?.length;
	const li = el("li", ok ? "step ok" : "step failed");
	const head = el("div", "step-head");
	head.append(el("span", "mark", ok ? "✓" : "✗"), el("span", "step-name", msg.name));
	if (msg.status) head.append(el("span", "step-status", String(msg.status)));
	head.append(el("span", "meta", `${Math.round(msg.duration / 1e6)} ms`));
	li.append(head);
	if (msg.explain) li.append(el("p", "hint", msg.explain));
	if (msg.output) li.append(el("pre", "output", msg.output));
	if (msg.failures?.length) {
		const ul = el("ul", "failures");
		for (const f of msg.failures) ul.append(el("li", "", f));
		li.append(ul);
	}
	steps.append(li);
}

function finish(passed, error) {
	result.dataset.state = passed ? "passed" : "failed";
	state.textContent = (passed ? "passed" : "failed") + (error ? `: ${error}` : "");
	// The sandbox changed: its counts on the page are stale.
	document.querySelector("table.sandbox-list")?.classList.add("stale");
}
