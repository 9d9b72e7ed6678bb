// script.js: example scripts, the form documentation examples take — a
// sequence of console commands, each optionally followed by its file:
//
//   # a comment
//   $ create -f -
//   apiVersion: v1
//   kind: ConfigMap
//   metadata: {name: demo}
//   $ get configmaps
//
// A line starting with "$ " begins a command (kubectl syntax, or a raw
// request "GET /api/v1/..."); the lines up to the next command are its file
// (the -f input or the request body). Scripts travel in URLs compressed
// (deflate, base64url).

import kubeplay from "./kubeplay.js";

// consolePath is where the engine runs console commands (package cli).
export const consolePath = "/kubeplay/console";

// parse returns the script's steps: [{command, file}].
export function parse(text) {
	const steps = [];
	for (const line of text.split("\n")) {
		if (line.startsWith("$ ")) steps.push({ command: line.slice(2).trim(), file: "" });
		else if (steps.length && !(steps.at(-1).file === "" && line.startsWith("#"))) steps.at(-1).file += line + "\n";
	}
	for (const s of steps) s.file = s.file.replace(/\n+$/, "\n").replace(/^\n+/, "");
	return steps.filter((s) => s.command);
}

// run runs one command, calling onText with its output as it comes; it
// resolves when the command ends (a watch: when signal aborts).
export async function run(command, file, onText, signal = undefined) {
	const res = await kubeplay.fetch(consolePath, {
		method: "POST",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ command, file }),
		signal,
	});
	const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
	for (;;) {
		const { value, done } = await reader.read();
		if (done) return;
		onText(value);
	}
}

// failed reports whether a command's output is an error, as kubectl prints
// them.
export const failed = (output) => /^(error: |Error from server)/m.test(output);

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

// encode compresses a script for a URL.
export async function encode(text) {
	const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
	return b64url(new Uint8Array(await new Response(stream).arrayBuffer()));
}

// decode is encode's inverse.
export async function decode(s) {
	const stream = new Blob([unb64url(s)]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
	return new Response(stream).text();
}
