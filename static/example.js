// example.js: one embedded example (embed.html, in an iframe): a script
// (script.js) carried in the URL fragment (#s=<encoded>), run step by step in
// its own sandbox in memory, with Run, Reset, "open in full playground"
// (index.html?run=...) and a permalink to the example as it stands: the
// script as edited and the sandbox's objects (state.js, #st=<encoded>),
// restored when the permalink is opened.

import kubeplay from "./kubeplay.js";
import * as script from "./script.js";
import * as state from "./state.js";

const $ = (id) => document.getElementById(id);
const runButton = $("kp-run");
const resetButton = $("kp-reset");
const status = $("kp-status");
const source = $("kp-script");
const output = $("kp-output");
const permalink = $("kp-permalink");
const share = $("kp-share");

const fragment = new URLSearchParams(location.hash.slice(1));
const encoded = fragment.get("s");
source.value = encoded ? await script.decode(encoded) : "# No example in the URL (#s=...).\n$ get namespaces\n";
fit();
source.addEventListener("input", () => {
	fit();
	links();
	share.hidden = true; // its link is the example as it was
});
links();
permalink.addEventListener("click", () => busy(sharePermalink()));

function fit() {
	source.rows = Math.min(source.value.split("\n").length, 16);
}

// links points "open in full playground" at the script as it stands.
async function links() {
	$("kp-open").href = new URL(`index.html?run=${await script.encode(source.value)}`, location.href).href;
}

// sharePermalink shows a link to the example with its objects, or the
// objects as a file when they are too many for a link.
async function sharePermalink() {
	status.textContent = "Reading the objects…";
	const s = await script.encode(source.value);
	await state.share(share, (st) => new URL(`embed.html#s=${s}&st=${st}`, location.href).href, (n) => `this script and its ${state.objects(n)}`);
	status.textContent = "Ready.";
}

kubeplay.ready.then(
	async () => {
		const st = fragment.get("st");
		if (st) {
			await busy(restoreState(st));
			return;
		}
		status.textContent = "Ready: the API runs in this page, in memory.";
		runButton.disabled = resetButton.disabled = permalink.disabled = false;
	},
	(err) => {
		status.textContent = err.message;
		status.className = "kp-error";
	},
);

// restoreState puts the permalink's objects back into the sandbox.
async function restoreState(encoded) {
	const st = await state.decode(encoded);
	const problems = await state.restore(st, (done, total) => (status.textContent = `Restoring the objects: ${done} / ${total}…`));
	status.textContent = problems.length
		? `Restored the link's objects but ${problems.length}: ${problems.join("; ")}`
		: `Restored the link's ${state.objects(st.objects.length)}: Run runs the script on them.`;
}

// busy disables the buttons while promise runs and shows its error, if any.
async function busy(promise) {
	status.className = "";
	runButton.disabled = resetButton.disabled = permalink.disabled = true;
	try {
		await promise;
	} catch (err) {
		status.textContent = err.message;
		status.className = "kp-error";
	} finally {
		runButton.disabled = resetButton.disabled = permalink.disabled = false;
	}
}

runButton.addEventListener("click", async () => {
	runButton.disabled = true;
	share.hidden = true;
	output.textContent = "";
	status.textContent = "Running…";
	let ok = true;
	for (const { command, file } of script.parse(source.value)) {
		const block = document.createElement("div");
		const prompt = document.createElement("b");
		prompt.textContent = `$ kubectl ${command}\n`;
		const text = document.createTextNode("");
		block.append(prompt, text);
		output.append(block);
		try {
			await script.run(command, file, (chunk) => text.appendData(chunk));
		} catch (err) {
			text.appendData(`error: ${err.message}\n`);
		}
		if (script.failed(text.data)) {
			block.className = "kp-failed";
			ok = false;
		}
	}
	status.textContent = ok ? "Done." : "Done: the API refused some requests (in red).";
	output.dataset.done = "";
	runButton.disabled = false;
});

resetButton.addEventListener("click", async () => {
	runButton.disabled = resetButton.disabled = true;
	status.textContent = "Resetting…";
	share.hidden = true;
	output.textContent = "";
	delete output.dataset.done;
	await kubeplay.reset();
	status.textContent = "Reset: an empty cluster.";
	runButton.disabled = resetButton.disabled = false;
});
