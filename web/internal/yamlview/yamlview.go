// Package yamlview prints a JSON object as YAML lines, each line split into
// highlightable tokens and tied to the field path it shows, so that views can
// colour syntax (server-side, as spans) and mark fields (by their managers)
// without a client-side framework. Keys are sorted, as kubectl -o yaml prints
// them.
package yamlview

import (
	"encoding/json"
	"slices"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// Token classes.
const (
	Key    = "y-key"
	String = "y-str"
	Number = "y-num"
	Atom   = "y-atom" // true, false, null
	Punct  = "y-punct"
)

// Token is a run of text; Class is "" for plain text (indentation, spaces).
type Token struct {
	Class string
	Text  string
}

// Line is one printed line.
type Line struct {
	Tokens []Token
	// Path is the field the line prints (its key, or its list item); nil
	// for none. Item is the list item a line starting with "- " opens, when
	// the line also prints that item's first field.
	Path, Item fieldpath.Path
}

// Text returns the line as plain text.
func (l Line) Text() string {
	var b strings.Builder
	for _, t := range l.Tokens {
		b.WriteString(t.Text)
	}
	return b.String()
}

// ElementFunc names the list item at index of the list at path, as field
// sets do (by key, by value, or by index).
type ElementFunc func(list fieldpath.Path, index int, item any) fieldpath.PathElement

// ByIndex names every list item by its index.
func ByIndex(_ fieldpath.Path, index int, _ any) fieldpath.PathElement {
	return fieldpath.IndexElement(index)
}

// Lines prints v (decoded JSON: maps, slices, strings, float64 or
// json.Number, bools, nil) naming list items with elem.
func Lines(v any, elem ElementFunc) []Line {
	p := printer{elem: elem}
	p.value(nil, v, "", nil)
	return p.lines
}

// Text prints v as YAML text.
func Text(v any) string {
	var b strings.Builder
	for _, l := range Lines(v, ByIndex) {
		b.WriteString(l.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

type printer struct {
	elem  ElementFunc
	lines []Line
}

// value prints v at path, its first line starting with prefix tokens (a key
// or a dash) and continuation lines indented by indent.
func (p *printer) value(prefix []Token, v any, indent string, path fieldpath.Path) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			p.emit(append(prefix, Token{Punct, "{}"}), path, nil)
			return
		}
		keys := sortedKeys(v)
		first := 0
		if isDash(prefix) {
			// "- key: value": the item's first field shares the dash's line.
			first = 1
			k := keys[0]
			p.field(prefix, k, v[k], indent, path, true)
		}
		for _, k := range keys[first:] {
			p.field([]Token{{"", indent}}, k, v[k], indent, path, false)
		}
	case []any:
		if len(v) == 0 {
			p.emit(append(prefix, Token{Punct, "[]"}), path, nil)
			return
		}
		if prefix != nil {
			p.emit(prefix, path, nil)
		}
		for i, item := range v {
			ipath := append(slices.Clip(path), p.elem(path, i, item))
			p.value([]Token{{"", indent}, {Punct, "- "}}, item, indent+"  ", ipath)
		}
	default:
		p.emit(append(prefix, scalar(v)...), path, nil)
	}
}

// field prints key: value inside the map at path.
func (p *printer) field(prefix []Token, k string, v any, indent string, path fieldpath.Path, onDash bool) {
	fpath := append(slices.Clip(path), fieldpath.PathElement{FieldName: &k})
	toks := append(slices.Clip(prefix), Token{Key, keyText(k)}, Token{Punct, ":"})
	child := indent + "  "
	switch c := v.(type) {
	case map[string]any:
		if len(c) > 0 {
			p.emit(toks, fpath, itemIf(onDash, path))
			for _, k2 := range sortedKeys(c) {
				p.field([]Token{{"", child}}, k2, c[k2], child, fpath, false)
			}
			return
		}
	case []any:
		if len(c) > 0 {
			// Lists are not indented under their key, as kubectl prints them.
			p.emit(toks, fpath, itemIf(onDash, path))
			p.value(nil, c, indent, fpath)
			return
		}
	}
	toks = append(toks, Token{"", " "})
	p.emit(append(toks, scalarOrEmpty(v)...), fpath, itemIf(onDash, path))
}

func (p *printer) emit(toks []Token, path, item fieldpath.Path) {
	p.lines = append(p.lines, Line{Tokens: toks, Path: path, Item: item})
}

func itemIf(ok bool, path fieldpath.Path) fieldpath.Path {
	if ok {
		return path
	}
	return nil
}

func isDash(toks []Token) bool {
	return len(toks) > 0 && toks[len(toks)-1].Class == Punct && toks[len(toks)-1].Text == "- "
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func scalarOrEmpty(v any) []Token {
	switch c := v.(type) {
	case map[string]any:
		if len(c) == 0 {
			return []Token{{Punct, "{}"}}
		}
	case []any:
		if len(c) == 0 {
			return []Token{{Punct, "[]"}}
		}
	}
	return scalar(v)
}

// scalar prints a scalar as YAML does, quoting strings that would read as
// something else; a multi-line string is printed JSON-quoted, which YAML
// reads back the same.
func scalar(v any) []Token {
	switch c := v.(type) {
	case nil:
		return []Token{{Atom, "null"}}
	case bool:
		if c {
			return []Token{{Atom, "true"}}
		}
		return []Token{{Atom, "false"}}
	case float64, json.Number, int, int64:
		b, _ := json.Marshal(c)
		return []Token{{Number, string(b)}}
	case string:
		if strings.ContainsAny(c, "\n\r") {
			b, _ := json.Marshal(c)
			return []Token{{String, string(b)}}
		}
		if plain(c) {
			return []Token{{String, c}}
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			b, _ = json.Marshal(c)
		}
		return []Token{{String, strings.TrimSuffix(string(b), "\n")}}
	default:
		b, _ := json.Marshal(c)
		return []Token{{String, string(b)}}
	}
}

// keyText prints a map key, quoted when YAML needs it.
func keyText(k string) string { return scalar(k)[0].Text }

// plain reports whether s prints as itself: a letter, then letters, digits
// and "-_./", and not a word YAML reads as a boolean or null. Anything else
// is left to the YAML encoder to quote (this only saves its cost).
func plain(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}
