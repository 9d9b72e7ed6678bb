package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// Seeds are bodies of every kind the scanner meets: plain, escaped, not
// UTF-8, numbers at their edges, and malformed in the ways that must send
// it back to the json.Decoder.
var Seeds = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}`,
	`{"metadata":{"name":"\u00e9\n\"x\"","annotations":{"k":"\ud800","l":"caf\xc3\xa9","m":"\xff"}},"data":{"a":"1"}}`,
	`{"spec":{"replicas":-0,"x":1.5e+10,"y":0.0,"z":-12E-3,"template":{"spec":{"containers":null}}}}`,
	` {"a" : [ true , false , null , {} , [] ] } `, `{"metadata":{"name":"p"}}x`, `{"a":1,}`, `{"a"}`, `{1:2}`,
	`[1,]`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":truex}`, `{"a":"s"x}`,
	`{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":[1 2]}`, `{"a":{"b":1]}`, `{`, ``, `  `, `"s"`, `"s"x`, `"s" x`,
	`1`, `1x`, `true`, `truex`, `null`, `[]`, `{}}`, `{"a":1}{"b":2}`, `{"spec":{"replicas":"3"}}`,
}

// TestScanner_tokensAsDecoder reads every seed's tokens from the scanner and
// from a json.Decoder, as the decoder reads them (More before each element),
// and wants the same tokens until the first error, where the scanner gives
// up.
func TestScanner_tokensAsDecoder(t *testing.T) {
	for _, body := range Seeds {
		compareTokens(t, body)
	}
}

func FuzzScanner_tokensAsDecoder(f *testing.F) {
	for _, body := range Seeds {
		f.Add(body)
	}
	f.Fuzz(compareTokens)
}

func compareTokens(t *testing.T, body string) {
	s := newScanner([]byte(body))
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.UseNumber()
	depth := 0
	for range 10000 {
		if depth > 0 {
			if sm, dm := s.More(), dec.More(); sm != dm {
				t.Fatalf("%q: More: scanner %v, decoder %v", body, sm, dm)
			}
		}
		st, serr := s.Token()
		dt, derr := dec.Token()
		if serr != nil {
			if !errors.Is(serr, errRescan) {
				t.Fatalf("%q: scanner failed with %v", body, serr)
			}
			return // the decoder reports it, whatever it says
		}
		if derr != nil {
			t.Fatalf("%q: the scanner read %#v where the decoder failed: %v", body, st, derr)
		}
		if !reflect.DeepEqual(st, dt) {
			t.Fatalf("%q: scanner %#v, decoder %#v", body, st, dt)
		}
		switch st {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return // the decoder reads no further than the value
		}
	}
}
