// embed.js: the <kubeplay-example> element, for documentation pages. Load it
// once, then write examples as script text (see script.js):
//
//   <script type="module" src="https://…/kubeplay/embed.js"></script>
//   <kubeplay-example>
//   $ get namespaces
//   </kubeplay-example>
//
// or name a script file (a scenario kept beside the page) with src:
//
//   <kubeplay-example src="examples/watch.txt"></kubeplay-example>
//
// Each example becomes an iframe of embed.html (beside this file) with its
// own sandbox in memory, in place of the element's text; the frames find each
// other in the page's frames (not in a shadow root, which window.frames does
// not list), so the page downloads and compiles the engine once
// (kubeplay.js).

import { encode } from "./script.js";

const embed = new URL("embed.html", import.meta.url);

class KubeplayExample extends HTMLElement {
	async connectedCallback() {
		if (this.dataset.kubeplay !== undefined) return;
		this.dataset.kubeplay = "";
		let text = this.textContent;
		const src = this.getAttribute("src");
		if (src) {
			const res = await fetch(new URL(src, document.baseURI));
			if (!res.ok) {
				this.textContent = `kubeplay example ${src}: HTTP ${res.status}`;
				return;
			}
			text = await res.text();
		}
		text = text.replace(/^\n+/, "").replace(/\s+$/, "\n");
		const lines = text.split("\n").length;
		const frame = document.createElement("iframe");
		frame.title = this.getAttribute("title") ?? "kubeplay example";
		frame.loading = "lazy";
		frame.style.cssText = `width: 100%; border: 1px solid #dfe3ea; border-radius: 6px; height: ${Math.max(18, Math.min(lines, 16) * 1.45 + 16)}em;`;
		frame.src = `${embed.href}#s=${await encode(text)}`;
		this.replaceChildren(frame);
	}
}

customElements.define("kubeplay-example", KubeplayExample);
