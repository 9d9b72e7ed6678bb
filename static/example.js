// example.js: one embedded example (embed.html, in an iframe): a script
// (script.js) carried in the URL fragment (#s=<encoded>), run step by step in
// its own sandbox in memory, with Run, Reset, "open in full playground"
// (index.html?run=...) and a permalink to the example as edited.

import kubeplay from "./kubeplay.js";
import * as script from "./script.js";

const $ = (id) => document.getElementById(id);
const runButton = $("kp-run");
const resetButton = $("kp-reset");
const status = $("kp-status");
const source = $("kp-script");
const output = $("kp-output");

const encoded = new URLSearchParams(location.hash.slice(1)).get("s");
source.value = encoded ? await script.decode(encoded) : "# No example in the URL (#s=...).\n$ get namespaces\n";
fit();
source.addEventListener("input", () => {
	fit();
	links();
});
links();

function fit() {
	source.rows = Math.min(source.value.split("\n").length, 16);
}

// links points "open in full playground" and the permalink at the script as
// it stands.
async function links() {
	const s = await script.encode(source.value);
	$("kp-open").href = new URL(`index.html?run=${s}`, location.href).href;
	$("kp-permalink").href = new URL(`embed.html#s=${s}`, location.href).href;
}

kubeplay.ready.then(
	() => {
		status.textContent = "Ready: the API runs in this page, in memory.";
		runButton.disabled = resetButton.disabled = false;
	},
	(err) => {
		status.textContent = err.message;
		status.className = "kp-error";
	},
);

runButton.addEventListener("click", async () => {
	runButton.disabled = true;
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
	output.textContent = "";
	delete output.dataset.done;
	await kubeplay.reset();
	status.textContent = "Reset: an empty cluster.";
	runButton.disabled = resetButton.disabled = false;
});
