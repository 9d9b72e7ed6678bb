package typed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Duplicates reports, in document order, the keys a JSON document gives
// more than once, as kube-apiserver reports them in an object of no Go
// type (a custom object): `duplicate field "spec.tags.a"`, with list
// indices (`"spec.ports[0].name"`). Text that is not JSON has none: the
// decoder proper says what is wrong with it.
func Duplicates(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out []string
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				k := key.(string) // object keys are strings
				child := join(path, k)
				if seen[k] {
					out = append(out, fmt.Sprintf("duplicate field %q", child))
				}
				seen[k] = true
				if err := walk(child); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(path + "[" + strconv.Itoa(i) + "]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	if walk("") != nil {
		return nil
	}
	return out
}
