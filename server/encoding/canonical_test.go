package encoding_test

import (
	"bytes"
	"strings"
	"testing"

	"kubeplay/server/encoding"
)

// canonicalSeeds are objects as MarshalObject writes them (canonical) and
// variations of them that are not.
var canonicalSeeds = []string{
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u","creationTimestamp":"2024-01-01T00:00:00Z","labels":{"a":"b","c":""}},"data":{"k":"v"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"generation":3,"zzz":1},"data":{"\u003c":"\u0026\u003e\u2028\u2029\u0001\b\f\n\r\t\"\\","é":"✓ 😀"}}`,
	`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"d","uid":"u","deletionTimestamp":"x","deletionGracePeriodSeconds":30,"finalizers":["f"],"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{}}}}}}]},"spec":{"a":[1,-2,3.5,1e5,-0.25E-3,true,false,null,[],{}]},"status":{}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"annotations":{},"b":1,"c":2}}`,
	// Not canonical.
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"uid":"u","name":"a"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"c":1,"b":2}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","name":"b"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"managedFields":[{"apiVersion":"v1","manager":"m"}]}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"b":"","a":""}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"","a":""}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"kind":"x"}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"<"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"\u0041"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"\/"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"\u000a"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"\ufffd"}}`,
	"{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{},\"data\":{\"a\":\"\xff\"}}",
	"{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{},\"data\":{\"a\":\"\u2028\"}}",
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{}, "data":{}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}` + "\n",
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"n":01}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"n":1.}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":[]}`,
	`{"kind":"ConfigMap","apiVersion":"v1"}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"b"}`,
	`{"kind":"ConfigMap"`,
	`null`,
	``,
}

// FuzzCanonical checks that bytes Canonical accepts are exactly what
// decoding and encoding them again gives, and that Layout.Append is what
// setting their resourceVersion (and, without type meta, dropping kind and
// apiVersion) and encoding gives.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ok := encoding.Canonical(b)
		if !ok {
			return
		}
		obj, err := encoding.DecodeObject(encoding.JSON, b)
		if err != nil {
			t.Fatalf("canonical %q does not decode: %v", b, err)
		}
		again, err := encoding.MarshalObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("canonical %q encodes again as %q", b, again)
		}
		obj["metadata"].(map[string]any)["resourceVersion"] = "1234"
		for _, withType := range []bool{true, false} {
			if !withType {
				delete(obj, "kind")
				delete(obj, "apiVersion")
			}
			want, _ := encoding.MarshalObject(obj)
			got := l.Append([]byte("x"), b, 1234, withType)
			if string(got[1:]) != string(want) {
				t.Errorf("Append(%q, %v) = %q, want %q", b, withType, got[1:], want)
			}
			if n := l.Len(b, 1234, withType); n != len(want) {
				t.Errorf("Len(%q, %v) = %d, want %d", b, withType, n, len(want))
			}
		}
	})
}

// TestCanonical_WhatMarshalObjectWrites: objects as the server stores them
// are canonical; the others are not.
func TestCanonical_WhatMarshalObjectWrites(t *testing.T) {
	for i, s := range canonicalSeeds {
		_, ok := encoding.Canonical([]byte(s))
		if want := i < 6; ok != want {
			t.Errorf("Canonical(%s) = %v, want %v", s, ok, want)
		}
	}
	obj, err := encoding.DecodeObject(encoding.JSON, []byte(canonicalSeeds[4]))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := encoding.MarshalObject(obj)
	l, ok := encoding.Canonical(b)
	if !ok {
		t.Fatalf("MarshalObject's %s is not canonical", b)
	}
	if got := string(l.Kind(b)) + string(l.APIVersion(b)); got != `"Pod""v1"` {
		t.Errorf("kind and apiVersion: %s", got)
	}
}

// BenchmarkCanonical scans a stored config map of about 1 KiB.
func BenchmarkCanonical(b *testing.B) {
	v := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-00001","namespace":"default","uid":"5b721a99-10a8-4206-bcb1-24aba61d521a","creationTimestamp":"2026-12-01T22:23:25Z","labels":{"app":"bench","tier":"t1"},"annotations":{"note":"a \u003cb\u003e \u0026 c"},"managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{},"f:c":{}},"f:metadata":{"f:annotations":{".":{},"f:note":{}},"f:labels":{".":{},"f:app":{},"f:tier":{}}}},"manager":"unknown","operation":"Update","time":"2026-12-01T22:23:25Z"}]},"data":{"a":"` +
		strings.Repeat("x", 600) + `","b":"line one\nline two","c":"00001"}}`)
	if _, ok := encoding.Canonical(v); !ok {
		b.Fatal("not canonical")
	}
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		encoding.Canonical(v)
	}
}

// TestCanonical_EveryPosition puts each byte encoding/json would have
// escaped (and some it would not) at every place of strings of every
// length up to 24, where the scanner reads eight bytes at a time.
func TestCanonical_EveryPosition(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for at := range n {
			for _, c := range []string{"\"", "\\", "<", ">", "&", "\x00", "\x1f", "\xff", "\u2028", "é", "\x7f", "~", " "} {
				s := strings.Repeat("a", at) + c + strings.Repeat("a", n-at-1)
				b := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"k":"` + s + `"}}`)
				_, got := encoding.Canonical(b)
				want := c == "é" || c == "\x7f" || c == "~" || c == " "
				if got != want {
					t.Errorf("Canonical with %q at %d of %d = %v, want %v", c, at, n, got, want)
				}
			}
		}
	}
}
