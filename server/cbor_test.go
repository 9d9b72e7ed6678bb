package server_test

import (
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"kubeplay/server"
	"kubeplay/server/encoding"
)

// The pairs in testdata/cbor are answers of kube-apiserver v1.35 with
// CBORServingAndStorage on: an object or list in JSON (<name>.json) and in
// CBOR (<name>.cbor.hex). Transcoding the JSON gives the same bytes, map
// keys aside (kube-apiserver shuffles them): the self-described tag, byte
// strings, integer widths, bytes fields as tagged byte strings of
// themselves.
func TestJSONToCBOR_ByteForByte(t *testing.T) {
	files, err := filepath.Glob("testdata/cbor/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			j, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".cbor.hex")
			if err != nil {
				t.Fatal(err)
			}
			want, err := hex.DecodeString(strings.TrimSpace(string(h)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := encoding.JSONToCBOR(j)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := sortedCBORHex(t, got), sortedCBORHex(t, want); g != w {
				t.Errorf("CBOR differs from kube-apiserver's\n got: %s\nwant: %s", g, w)
			}
		})
	}
}

// With the gate on, kube-apiserver names CBOR among what it serves and
// reads (and protobuf, natively); with it off, CBOR is refused as before. The gate
// switches without a restart.
func TestCBORServingAndStorage_Gate(t *testing.T) {
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	const cms = "/api/v1/namespaces/default/configmaps"
	tgt := &target{URL: ts.URL}
	if resp, b := call(t, tgt, "POST", cms, `{"metadata":{"name":"cm"}}`); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	cborBody, err := encoding.JSONToCBOR([]byte(`{"metadata":{"name":"other"}}`))
	if err != nil {
		t.Fatal(err)
	}
	const (
		object       = "406: Not Acceptable\n\nAvailable representations: " + servedTypes
		only         = "only the following media types are accepted: " + servedTypes
		unknownBody  = "the body of the request was in an unknown format - accepted media types include: " + servedTypes
		patchRefused = "415: Unsupported Media Type"
	)
	type check struct {
		name, method, path, contentType, accept, body string
		code                                          int
		message                                       string
	}
	on := []check{
		{"object 406", "GET", cms + "/cm", "", "text/plain", "", 406, object + ", application/cbor"},
		{"collection 406", "GET", cms, "", "text/plain", "", 406, object + ", application/cbor, " + servedStreamTypes + ", application/cbor-seq"},
		{"table in cbor", "GET", cms, "", "application/cbor;as=Table;g=meta.k8s.io;v=v1", "", 406, only + ", application/cbor"},
		{"cbor-seq object", "GET", cms + "/cm", "", "application/cbor-seq", "", 406, object + ", application/cbor"},
		{"cbor-seq list", "GET", cms, "", "application/cbor-seq", "", 406, only + ", application/cbor"},
		{"cbor-seq watch", "GET", cms + "?watch=true", "", "application/cbor-seq", "", 406, only + ", application/cbor"},
		{"yaml watch", "GET", cms + "?watch=true", "", "application/yaml", "", 406, "only the following media types are accepted: " + servedStreamTypes + ", application/cbor-seq"},
		{"unknown body", "POST", cms, "text/plain", "", "x", 415, unknownBody + ", application/cbor"},
		{"merge patch in cbor", "PATCH", cms + "/cm", "application/merge-patch+cbor", "text/plain", string(cborBody), 415, patchRefused},
		{"cbor body", "POST", cms, "application/cbor", "", string(cborBody), 201, ""},
	}
	off := []check{
		{"cbor answer", "GET", cms + "/cm", "", "application/cbor", "", 406, object},
		{"cbor-seq list", "GET", cms, "", "application/cbor-seq", "", 406, object + ", " + servedStreamTypes},
		{"cbor body", "POST", cms, "application/cbor", "", string(cborBody), 415, unknownBody},
		{"apply in cbor", "PATCH", cms + "/cm?fieldManager=m", "application/apply-patch+cbor", "", string(cborBody), 415, patchRefused},
	}
	for _, phase := range []struct {
		gates  string
		checks []check
	}{{"", off}, {"CBORServingAndStorage=true", on}, {"CBORServingAndStorage=false", off}} {
		gates, err := server.ParseFeatureGates(phase.gates)
		if err != nil {
			t.Fatal(err)
		}
		srv.SetFeatureGates(gates)
		for _, c := range phase.checks {
			t.Run(phase.gates+" "+c.name, func(t *testing.T) {
				headers := []string{}
				if c.contentType != "" {
					headers = append(headers, "Content-Type", c.contentType)
				}
				if c.accept != "" {
					headers = append(headers, "Accept", c.accept)
				}
				resp, b := call(t, tgt, c.method, c.path, c.body, headers...)
				if resp.StatusCode != c.code {
					t.Fatalf("got %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
				}
				if c.message == "" {
					call(t, tgt, "DELETE", cms+"/other", "")
					return
				}
				if ct := resp.Header.Get("Content-Type"); ct == "application/yaml" && c.accept == ct {
					b, _ = yaml.YAMLToJSON(b) // the Status in the format the client accepts
				} else if ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if got := statusMessage(t, b); got != c.message {
					t.Errorf("message %q, want %q", got, c.message)
				}
			})
		}
	}
}

// A custom object's spec with numbers of every kind, and its CBOR as
// kube-apiserver v1.35 (gate on) served it after a create from this JSON:
// integers in their shortest head, other numbers as the shortest float
// that keeps them (1.0 is a float; kube-apiserver keeps it so, storing
// the object as CBOR; kubeplay's JSON store does not: see README).
const (
	numbersSpec = `{"f":1.5,"g":2,"h":1.0,"i":-7,"j":100000,"k":1e300,"l":0.1,"m":"s","n":true,"o":null,"p":[1,2.5],"q":5000000000}`
	numbersCBOR = "ac4167024168f93c00416bfb7e37e43c8800759c416ff6416926416a1a000186a0416cfb3fb999999999999a" +
		"416ef541711b000000012a05f200416d417341708201f941004166f93e00"
)

func TestJSONToCBOR_Numbers(t *testing.T) {
	// The oracle's spec after the head of {"spec": ...}.
	const oracle = "d9d9f7a14473706563" + numbersCBOR
	got, err := encoding.JSONToCBOR([]byte(`{"spec":` + numbersSpec + `}`))
	if err != nil {
		t.Fatal(err)
	}
	want, err := hex.DecodeString(oracle)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := sortedCBORHex(t, got), sortedCBORHex(t, want); g != w {
		t.Errorf("CBOR differs from kube-apiserver's\n got: %s\nwant: %s", g, w)
	}
}
