package editor

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// step is one element of a field path as the API prints it in conflict
// causes: .name, [k="v",...] (a list item by key), [=v] (by value), [i].
type step struct {
	field string
	keys  map[string]any // by key
	value any            // by value, when byValue
	byVal bool
	index int // by index, when >= 0
}

// parsePath parses a cause's field (".spec.containers[name=\"c\"].image").
func parsePath(s string) ([]step, error) {
	var out []step
	for len(s) > 0 {
		switch s[0] {
		case '.':
			end := strings.IndexAny(s[1:], ".[")
			if end < 0 {
				end = len(s) - 1
			}
			out = append(out, step{field: s[1 : end+1], index: -1})
			s = s[end+1:]
		case '[':
			end := closing(s)
			if end < 0 {
				return nil, fmt.Errorf("unterminated [ in %q", s)
			}
			inner := s[1:end]
			s = s[end+1:]
			st := step{index: -1}
			switch {
			case strings.HasPrefix(inner, "="):
				st.byVal = true
				if err := json.Unmarshal([]byte(inner[1:]), &st.value); err != nil {
					return nil, err
				}
			case inner != "" && inner[0] >= '0' && inner[0] <= '9':
				i, err := strconv.Atoi(inner)
				if err != nil {
					return nil, err
				}
				st.index = i
			default:
				st.keys = map[string]any{}
				for _, kv := range splitTop(inner) {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return nil, fmt.Errorf("bad key %q", kv)
					}
					var val any
					if err := json.Unmarshal([]byte(v), &val); err != nil {
						return nil, err
					}
					st.keys[k] = val
				}
			}
			out = append(out, st)
		default:
			return nil, fmt.Errorf("unexpected %q in path", s)
		}
	}
	return out, nil
}

// closing finds the ] closing s[0] ('['), skipping quoted strings.
func closing(s string) int {
	inStr := false
	for i := 1; i < len(s); i++ {
		switch {
		case inStr && s[i] == '\\':
			i++
		case s[i] == '"':
			inStr = !inStr
		case !inStr && s[i] == ']':
			return i
		}
	}
	return -1
}

// splitTop splits k="v",k2=1 at commas outside quotes.
func splitTop(s string) []string {
	var out []string
	inStr, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case inStr && s[i] == '\\':
			i++
		case s[i] == '"':
			inStr = !inStr
		case !inStr && s[i] == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// matches reports whether list item i (v) is the one st names.
func (st step) matches(i int, v any) bool {
	switch {
	case st.index >= 0:
		return i == st.index
	case st.byVal:
		return equalJSON(v, st.value)
	default:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, want := range st.keys {
			if !equalJSON(m[k], want) {
				return false
			}
		}
		return true
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// get returns the value at path in obj.
func get(obj any, path []step) (any, bool) {
	cur := obj
	for _, st := range path {
		if st.field != "" {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[st.field]; !ok {
				return nil, false
			}
			continue
		}
		l, ok := cur.([]any)
		if !ok {
			return nil, false
		}
		found := false
		for i, item := range l {
			if st.matches(i, item) {
				cur, found = item, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// drop removes the value at path from obj (a list item, or a map field),
// reporting whether it was there.
func drop(obj any, path []step) bool {
	if len(path) == 0 {
		return false
	}
	parent, ok := get(obj, path[:len(path)-1])
	if !ok {
		return false
	}
	last := path[len(path)-1]
	if last.field != "" {
		m, ok := parent.(map[string]any)
		if _, has := m[last.field]; !ok || !has {
			return false
		}
		delete(m, last.field)
		return true
	}
	l, ok := parent.([]any)
	if !ok {
		return false
	}
	for i, item := range l {
		if last.matches(i, item) {
			return set(obj, path[:len(path)-1], append(l[:i:i], l[i+1:]...))
		}
	}
	return false
}

// set replaces the value at path in obj with v, creating missing map
// fields; a missing list item cannot be created.
func set(obj any, path []step, v any) bool {
	if len(path) == 0 {
		return false
	}
	cur := obj
	for k, st := range path {
		lastStep := k == len(path)-1
		if st.field != "" {
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if lastStep {
				m[st.field] = v
				return true
			}
			next, ok := m[st.field]
			if !ok {
				next = map[string]any{}
				if path[k+1].field == "" {
					return false
				}
				m[st.field] = next
			}
			cur = next
			continue
		}
		l, ok := cur.([]any)
		if !ok {
			return false
		}
		found := false
		for i, item := range l {
			if st.matches(i, item) {
				if lastStep {
					l[i] = v
					return true
				}
				cur, found = item, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return false
}
