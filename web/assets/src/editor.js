// Source of web/assets/editor.js (bundled by `go tool task ui-assets` with
// esbuild): turns the editor page's textarea into a CodeMirror 6 editor
// with YAML support. The form still posts the textarea, which this keeps
// in step; without JavaScript the textarea works as it is.
import { EditorView, minimalSetup } from "codemirror";
import { lineNumbers, highlightActiveLine, highlightActiveLineGutter } from "@codemirror/view";
import { yaml } from "@codemirror/lang-yaml";
import { HighlightStyle, syntaxHighlighting, indentOnInput, bracketMatching } from "@codemirror/language";
import { tags } from "@lezer/highlight";

// Colours from the page's stylesheet, so light and dark themes both work.
const theme = EditorView.theme({
	"&": { backgroundColor: "var(--bg)", color: "var(--text)", border: "1px solid var(--line)", borderRadius: "6px" },
	".cm-content": { fontFamily: "var(--mono)", caretColor: "var(--text)" },
	".cm-gutters": { backgroundColor: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
	".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--accent-soft)" },
	"&.cm-focused": { outline: "2px solid var(--accent)" },
	".cm-scroller": { minHeight: "22em", maxHeight: "60vh" },
});
const highlight = HighlightStyle.define([
	{ tag: [tags.propertyName, tags.definition(tags.propertyName)], class: "y-key" },
	{ tag: [tags.string, tags.content, tags.attributeValue], class: "y-str" },
	{ tag: tags.number, class: "y-num" },
	{ tag: [tags.bool, tags.null, tags.keyword], class: "y-atom" },
	{ tag: [tags.comment, tags.punctuation, tags.separator], class: "y-punct" },
]);

const textarea = document.getElementById("yaml");
if (textarea) {
	const view = new EditorView({
		doc: textarea.value,
		extensions: [minimalSetup, lineNumbers(), highlightActiveLine(), highlightActiveLineGutter(), indentOnInput(), bracketMatching(), yaml(), theme, syntaxHighlighting(highlight),
			EditorView.contentAttributes.of({ "aria-label": "YAML" }),
			EditorView.updateListener.of((u) => { if (u.docChanged) textarea.value = u.state.doc.toString(); })],
	});
	textarea.after(view.dom);
	textarea.hidden = true;
	// After a write, show its answer.
	document.querySelector(".result")?.scrollIntoView({ block: "nearest" });
	// For tests and the console: the editor's view.
	window.kubeplayEditor = view;
}
