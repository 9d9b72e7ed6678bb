// Package htmltest queries rendered HTML in tests: parse a page, find
// elements by tag and attributes, read their text and attributes.
package htmltest

import (
	"io"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Node is an element (or the document) of a parsed page.
type Node struct {
	n *html.Node
}

// Parse parses a whole HTML document.
func Parse(t testing.TB, r io.Reader) Node {
	t.Helper()
	doc, err := html.Parse(r)
	if err != nil {
		t.Fatalf("parsing HTML: %v", err)
	}
	return Node{doc}
}

// All returns the elements below n, in document order, with the tag ("" for
// any) and every given attribute. attrs are name, value pairs: "class" matches
// one of the element's classes, a value of "*" matches any value (the
// attribute is present), any other value matches exactly.
func (n Node) All(tag string, attrs ...string) []Node {
	if len(attrs)%2 != 0 {
		panic("htmltest: attrs must be name, value pairs")
	}
	var out []Node
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		for c := range c.ChildNodes() {
			if c.Type == html.ElementNode && (tag == "" || c.Data == tag) && matches(c, attrs) {
				out = append(out, Node{c})
			}
			walk(c)
		}
	}
	walk(n.n)
	return out
}

// One returns the only element All finds, failing the test otherwise.
func (n Node) One(t testing.TB, tag string, attrs ...string) Node {
	t.Helper()
	all := n.All(tag, attrs...)
	if len(all) != 1 {
		t.Fatalf("want exactly one <%s %v>, found %d", tag, attrs, len(all))
	}
	return all[0]
}

// Has reports whether All finds anything.
func (n Node) Has(tag string, attrs ...string) bool {
	return len(n.All(tag, attrs...)) > 0
}

// Attr returns the value of the attribute key and whether it is present.
func (n Node) Attr(key string) (string, bool) {
	for _, a := range n.n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Selected returns the value of the option selected in n's one select
// named name ("" if none is).
func (n Node) Selected(t testing.TB, name string) string {
	t.Helper()
	for _, o := range n.One(t, "select", "name", name).All("option") {
		if _, ok := o.Attr("selected"); ok {
			v, _ := o.Attr("value")
			return v
		}
	}
	return ""
}

// Text returns the text content, with runs of white space collapsed to one
// space and trimmed.
func (n Node) Text() string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
		for c := range c.ChildNodes() {
			walk(c)
		}
	}
	walk(n.n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// Texts returns the Text of each node.
func Texts(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Text()
	}
	return out
}

func matches(e *html.Node, attrs []string) bool {
	for i := 0; i < len(attrs); i += 2 {
		key, want := attrs[i], attrs[i+1]
		got, ok := Node{e}.Attr(key)
		switch {
		case !ok:
			return false
		case want == "*":
		case key == "class":
			if !slices.Contains(strings.Fields(got), want) {
				return false
			}
		case got != want:
			return false
		}
	}
	return true
}
