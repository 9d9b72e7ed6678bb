package server_test

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"kubeplay/server"
	"kubeplay/server/encoding"
)

// Scenarios are request sequences whose answers were recorded from a real
// kube-apiserver (../shared/oracle). To re-record against a freshly started
// oracle:
//
//	go test ./server -run TestScenarios -oracle https://127.0.0.1:6453 -oracle-token oracle-token
//
// The auth-* scenarios need an oracle that authorizes by RBAC and knows the
// users of testdata/auth-tokens.csv (copy it outside the oracle's state
// directory, where start.sh writes its own tokens.csv):
//
//	./start.sh --authorization-mode=RBAC --token-auth-file=/tmp/auth-tokens.csv
var (
	oracleURL   = flag.String("oracle", "", "record scenario answers from this kube-apiserver instead of checking kubeplay")
	oracleToken = flag.String("oracle-token", "oracle-token", "bearer token for -oracle")
)

type scenario struct {
	Description string `json:"description"`
	// FeatureGates switch kubeplay's gates for the replay, as the oracle's
	// --feature-gates flag did when it was recorded.
	FeatureGates string `json:"featureGates,omitempty"`
	// RuntimeConfig switches kubeplay's group versions for the replay, as
	// the oracle's --runtime-config flag did when it was recorded.
	RuntimeConfig string `json:"runtimeConfig,omitempty"`
	// GeneratedNames are generateName prefixes whose random completions
	// answers quote (in messages too): compared as prefix+"XXXXX".
	GeneratedNames []string `json:"generatedNames,omitempty"`
	// NativeOnly, when set, says why the browser engine answers otherwise
	// (it calls no webhooks): the scenario is not replayed under GOOS=js.
	NativeOnly string `json:"nativeOnly,omitempty"`
	Steps      []step `json:"steps"`
}

type step struct {
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Body    json.RawMessage `json:"body,omitempty"`
	RawBody string          `json:"rawBody,omitempty"`
	// CBORBody is sent as self-described CBOR (the encoding kube-apiserver
	// writes); HexBody as the bytes it spells.
	CBORBody json.RawMessage `json:"cborBody,omitempty"`
	HexBody  string          `json:"hexBody,omitempty"`
	// ProtobufBody is sent in protobuf, as kube-apiserver writes the
	// object it spells (built-in kinds only; natively only).
	ProtobufBody json.RawMessage `json:"protobufBody,omitempty"`
	ContentType  string          `json:"contentType,omitempty"`
	// Headers are extra request headers: Accept, Accept-Encoding, ...,
	// Authorization with one of the tokens of testdata/auth-tokens.csv, or
	// Impersonate-User. Without an Authorization header the oracle is sent
	// its admin token, and kubeplay gets an anonymous request (anonymous is
	// admin there).
	Headers map[string]string `json:"headers,omitempty"`
	// CheckHeaders names response headers recorded and compared, besides
	// the code and body: the first value of each, or all of them joined by
	// newlines for a name ending in "*" ("Warning*": every warning).
	CheckHeaders []string `json:"checkHeaders,omitempty"`
	// CheckBytes compares a CBOR answer byte for byte (its maps sorted);
	// only for answers without uids, timestamps or resourceVersions.
	CheckBytes bool `json:"checkBytes,omitempty"`
	// Pending, when set, says why kubeplay's answer is not yet the oracle's
	// in full: its body is then checked to be a subset of the oracle's.
	Pending string `json:"pending,omitempty"`
	// BadRequestFor500, when set, says why the oracle's 500 is the client's
	// mistake: kubeplay answers it as a 400 BadRequest with the same message.
	BadRequestFor500 string `json:"badRequestFor500,omitempty"`
	// Sleep, when recording, waits this long before the request, for the
	// real server's controllers to act (kubeplay's act in the write path).
	Sleep string `json:"sleep,omitempty"`
	// SameResourceVersionAs, when set, is the index of an earlier step whose
	// answer has the resourceVersion this one's must have (a write that
	// changed nothing); checked on the oracle when recording too, as
	// resourceVersions are otherwise normalized away.
	SameResourceVersionAs *int      `json:"sameResourceVersionAs,omitempty"`
	Response              *response `json:"response,omitempty"`
}

// rvRef is "{rv:N}" in a step's path: the resourceVersion of step N's answer.
var rvRef = regexp.MustCompile(`\{rv:(\d+)\}`)

// resolve returns st's path with its {rv:N} references filled in from the
// answers before it, and checks st.SameResourceVersionAs on its answer.
func (st step) resolve(t *testing.T, answers []*response) string {
	t.Helper()
	return rvRef.ReplaceAllStringFunc(st.Path, func(ref string) string {
		n, _ := strconv.Atoi(rvRef.FindStringSubmatch(ref)[1])
		return resourceVersionOf(t, answers[n])
	})
}

func resourceVersionOf(t *testing.T, r *response) string {
	t.Helper()
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(r.Body, &obj); err != nil || obj.Metadata.ResourceVersion == "" {
		t.Fatalf("no resourceVersion in %s", r.Body)
	}
	return obj.Metadata.ResourceVersion
}

// checkSameResourceVersion reports a step whose answer should carry an
// earlier answer's resourceVersion and does not.
func (st step) checkSameResourceVersion(t *testing.T, label string, got *response, answers []*response) {
	t.Helper()
	if st.SameResourceVersionAs == nil {
		return
	}
	if g, w := resourceVersionOf(t, got), resourceVersionOf(t, answers[*st.SameResourceVersionAs]); g != w {
		t.Errorf("%s: resourceVersion %s, want %s (step %d's): the write changed nothing", label, g, w, *st.SameResourceVersionAs)
	}
}

type response struct {
	Code    int               `json:"code"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body"`
	// CBOR is the hex of a CBOR body with sorted maps (step.CheckBytes).
	CBOR string `json:"cbor,omitempty"`
	// Protobuf is the hex of a protobuf body (step.CheckBytes).
	Protobuf string `json:"protobuf,omitempty"`
}

func TestScenarios(t *testing.T) { runScenarios(t, "scenarios") }

// runScenarios records or replays the scenarios of testdata/<set>, whose
// recordings are in testdata/oracle/<set>.
func runScenarios(t *testing.T, set string) {
	inputs, err := filepath.Glob(filepath.Join("testdata", set, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			golden := filepath.Join("testdata", "oracle", set, name+".json")
			if *oracleURL != "" {
				record(t, in, golden)
				return
			}
			replay(t, golden)
		})
	}
}

// withoutGeneratedNames replaces the completions of sc.GeneratedNames in body.
func (sc scenario) withoutGeneratedNames(body json.RawMessage) json.RawMessage {
	for _, prefix := range sc.GeneratedNames {
		re := regexp.MustCompile(regexp.QuoteMeta(prefix) + "[" + generatedNameChars + "]{5}")
		body = re.ReplaceAll(body, []byte(prefix+"XXXXX"))
	}
	return body
}

// generatedNameChars are the characters of generated name suffixes.
const generatedNameChars = "bcdfghjklmnpqrstvwxz2456789"

func readScenario(t *testing.T, path string) scenario {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sc
}

func (st step) request(t *testing.T, base string, answers []*response) *http.Request {
	t.Helper()
	var body io.Reader
	ct := st.ContentType
	switch {
	case st.RawBody != "":
		body = strings.NewReader(st.RawBody)
	case st.CBORBody != nil:
		b, err := encoding.JSONToCBOR(st.CBORBody)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	case st.ProtobufBody != nil:
		var obj map[string]any
		if err := json.Unmarshal(st.ProtobufBody, &obj); err != nil {
			t.Fatal(err)
		}
		b, err := encoding.MarshalProtobuf(obj)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
		if ct == "" {
			ct = encoding.Protobuf
		}
	case st.HexBody != "":
		b, err := hex.DecodeString(st.HexBody)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	case st.Body != nil:
		body = bytes.NewReader(st.Body)
		if ct == "" {
			ct = "application/json"
		}
	}
	req, err := http.NewRequest(st.Method, base+st.resolve(t, answers), body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("User-Agent", "kubeplay-scenarios")
	for k, v := range st.Headers {
		req.Header.Set(k, v)
	}
	return req
}

func record(t *testing.T, in, golden string) {
	sc := readScenario(t, in)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var answers []*response
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.Sleep != "" {
			d, err := time.ParseDuration(st.Sleep)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
		}
		req := st.request(t, *oracleURL, answers)
		if req.Header.Get("Authorization") == "" {
			req.Header.Set("Authorization", "Bearer "+*oracleToken)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		st.Response = readResponse(t, resp, st.CheckHeaders, st.CheckBytes)
		st.checkSameResourceVersion(t, fmt.Sprintf("oracle step %d", i), st.Response, answers)
		answers = append(answers, st.Response)
		if st.Method != http.MethodGet && strings.Contains(st.Path, "/rbac.authorization.k8s.io/") {
			// The oracle's authorizer reads RBAC objects through a cache:
			// give it time to see this write before the next step.
			time.Sleep(time.Second)
		}
	}
	out, _ := json.MarshalIndent(sc, "", "  ")
	if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readResponse reads a response: a JSON (or YAML) body compacted, a stream of JSON
// values (a watch) as an array of them, CBOR and protobuf as the JSON they
// stand for (with their bytes when checkBytes), anything else as a string;
// a gzip body is decompressed first.
func readResponse(t *testing.T, resp *http.Response, headers []string, checkBytes bool) *response {
	t.Helper()
	b := readBody(t, resp)
	r := &response{Code: resp.StatusCode}
	for _, h := range headers {
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		if name, all := strings.CutSuffix(h, "*"); all {
			r.Headers[h] = strings.Join(resp.Header.Values(name), "\n")
		} else {
			r.Headers[h] = resp.Header.Get(h)
		}
	}
	if ct := resp.Header.Get("Content-Type"); isCBOR(ct) {
		r.Body = cborAsJSON(t, b, strings.HasPrefix(ct, "application/cbor-seq"))
		if checkBytes {
			r.CBOR = sortedCBORHex(t, b)
		}
		return r
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, encoding.Protobuf) {
		r.Body = protobufAsJSON(t, b, ct == encoding.ProtobufWatch)
		if checkBytes {
			r.Protobuf = hex.EncodeToString(b)
		}
		return r
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/yaml") {
		if j, err := yaml.YAMLToJSON(b); err == nil {
			b = j // compared as data; the Content-Type header can be checked
		}
	}
	if json.Valid(b) {
		var buf bytes.Buffer
		json.Compact(&buf, b)
		r.Body = buf.Bytes()
	} else if stream, ok := jsonStream(b); ok {
		r.Body = stream
	} else {
		r.Body, _ = json.Marshal(string(b))
	}
	return r
}

// readBody reads and closes resp's body, decompressed if it is gzipped.
func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonStream returns a stream of JSON values as a JSON array.
func jsonStream(b []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var values []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, false
	}
	out, _ := json.Marshal(values)
	var buf bytes.Buffer
	json.Compact(&buf, out)
	return buf.Bytes(), true
}

func replay(t *testing.T, golden string) {
	sc := readScenario(t, golden)
	if sc.NativeOnly != "" && runtime.GOOS == "js" {
		t.Skip(sc.NativeOnly)
	}
	gates, err := server.ParseFeatureGates(sc.FeatureGates)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := server.ParseRuntimeConfig(sc.RuntimeConfig)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newTestServerWith(t, server.Options{FeatureGates: gates, RuntimeConfig: rc}))
	defer srv.Close()
	var answers []*response
	for i, st := range sc.Steps {
		got := readResponse(t, mustDo(t, st.request(t, srv.URL, answers)), st.CheckHeaders, st.CheckBytes)
		answers = append(answers, got)
		label := fmt.Sprintf("step %d: %s %s", i, st.Method, st.Path)
		st.checkSameResourceVersion(t, label, got, answers)
		if st.BadRequestFor500 != "" {
			st.Response = asBadRequest(t, label, st.Response)
		}
		if got.Code != st.Response.Code {
			t.Errorf("%s: code %d, oracle %d\n got: %s\nwant: %s", label, got.Code, st.Response.Code, got.Body, st.Response.Body)
			continue
		}
		if !reflect.DeepEqual(got.Headers, st.Response.Headers) {
			t.Errorf("%s: headers %v, oracle %v", label, got.Headers, st.Response.Headers)
		}
		if got.CBOR != st.Response.CBOR {
			t.Errorf("%s: CBOR bytes differ from the oracle's\n got: %s\nwant: %s", label, got.CBOR, st.Response.CBOR)
		}
		if got.Protobuf != st.Response.Protobuf {
			t.Errorf("%s: protobuf bytes differ from the oracle's\n got: %s\nwant: %s", label, got.Protobuf, st.Response.Protobuf)
		}
		g, w := normalize(t, sc.withoutGeneratedNames(got.Body)), normalize(t, sc.withoutGeneratedNames(st.Response.Body))
		if st.Pending != "" {
			if path, ok := subset(g, w, ""); !ok {
				t.Errorf("%s (pending: %s): kubeplay's %s differs from the oracle's\n got: %s\nwant: %s", label, st.Pending, path, got.Body, st.Response.Body)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("%s: body differs from the oracle's\n got: %s\nwant: %s", label, gj, wj)
		}
	}
}

// asBadRequest turns the oracle's 500 into the 400 kubeplay gives instead.
func asBadRequest(t *testing.T, label string, r *response) *response {
	var status map[string]any
	if err := json.Unmarshal(r.Body, &status); err != nil || r.Code != http.StatusInternalServerError {
		t.Fatalf("%s: badRequestFor500 on an oracle answer %d %s", label, r.Code, r.Body)
	}
	status["code"], status["reason"] = float64(http.StatusBadRequest), "BadRequest"
	body, _ := json.Marshal(status)
	return &response{Code: http.StatusBadRequest, Headers: r.Headers, Body: body}
}

func mustDo(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// ageCell matches an age as a Table prints it ("0s", "5m3s", "2d").
var ageCell = regexp.MustCompile(`^([0-9]+[smhdy])+$`)

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	inRecordRV  = regexp.MustCompile(`in record \(\d+\)`)
	quotedRV    = regexp.MustCompile(`resourceVersion(\\*)":(\\*)"\d+`)
	quotedTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

// tokenVolume is the name of the API credentials volume of a pod.
var tokenVolume = regexp.MustCompile(`^kube-api-access-[` + generatedNameChars + `]{5}$`)

var generatedSuffix = regexp.MustCompile(`^(.*-)[` + generatedNameChars + `]{5}$`)

// normalize replaces what legitimately differs between two servers (uids,
// timestamps, resource versions, generated name suffixes) with placeholders.
func normalize(t *testing.T, body json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any, string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			if gn, ok := x["generateName"].(string); ok {
				if n, ok := x["name"].(string); ok && generatedSuffix.MatchString(n) && strings.HasPrefix(n, gn) {
					x["name"] = gn + "XXXXX"
				}
			}
			for k, e := range x {
				x[k] = walk(e, k)
			}
			if entries, ok := x["managedFields"].([]any); ok {
				// Within an operation kube-apiserver orders entries by the
				// second of their time, then by manager: two applies either
				// side of a second boundary swap places. Order them as if
				// every write fell in the same second.
				slices.SortStableFunc(entries, func(a, b any) int {
					return strings.Compare(managedFieldsKey(a), managedFieldsKey(b))
				})
			}
			if pods, ok := x["disruptedPods"].(map[string]any); ok {
				// A PodDisruptionBudget's evicted pods, by eviction time.
				for pod := range pods {
					pods[pod] = "TIME"
				}
			}
			if causes, ok := x["causes"].([]any); ok {
				// kube-apiserver lists Server-Side Apply conflicts in map order.
				slices.SortFunc(causes, func(a, b any) int {
					return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
				})
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, key)
			}
		case string:
			// Uids quoted in messages (a uid precondition's) differ too.
			x = uuidPattern.ReplaceAllString(x, "UID")
			x = tokenVolume.ReplaceAllString(x, "kube-api-access-XXXXX")
			v = x
			switch key {
			case "message":
				// Conflict messages quote the resourceVersion in record;
				// a strict patch's quote the whole patched object.
				x = inRecordRV.ReplaceAllString(x, "in record (RV)")
				x = quotedRV.ReplaceAllString(x, `resourceVersion$1":$2"RV`)
				return quotedTime.ReplaceAllString(x, "TIME")
			case "uid":
				return "UID"
			case "creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime", "lastPhaseTransitionTime", "lastUpdateTime":
				return "TIME"
			case "clusterIP", "clusterIPs": // allocated at random
				if x != "None" {
					return "CLUSTER-IP"
				}
			case "resourceVersion":
				if x != "" {
					return "RV"
				}
			case "cells": // a Table's ages and timestamps
				if ageCell.MatchString(x) {
					return "AGE"
				}
				if _, err := time.Parse(time.RFC3339, x); err == nil {
					return "TIME"
				}
			}
		}
		return v
	}
	return walk(v, "")
}

func managedFieldsKey(entry any) string {
	e, _ := entry.(map[string]any)
	return fmt.Sprint(e["operation"], "\x00", e["manager"], "\x00", e["apiVersion"], "\x00", e["subresource"])
}

// subset reports whether every value in got is in want, returning the first
// path where it is not; a string is in want when want begins with it (a
// message listing less than the oracle's).
func subset(got, want any, path string) (string, bool) {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range g {
			if p, ok := subset(v, w[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			return path, false
		}
		for i := range g {
			if p, ok := subset(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case string:
		w, ok := want.(string)
		return path, ok && strings.HasPrefix(w, g)
	}
	return path, reflect.DeepEqual(got, want)
}

// protobufAsJSON returns a protobuf body as the JSON of the object it
// holds, a watch stream (length-prefixed WatchEvents) as a JSON array of
// its events.
func protobufAsJSON(t *testing.T, b []byte, stream bool) json.RawMessage {
	t.Helper()
	decode := func(b []byte) map[string]any {
		obj, err := encoding.DecodeObject(encoding.Protobuf, b)
		if err != nil {
			t.Fatalf("protobuf answer: %v (%x)", err, b)
		}
		return obj
	}
	if !stream {
		j, _ := json.Marshal(decode(b))
		return j
	}
	events := []any{}
	for len(b) > 0 {
		if len(b) < 4 || len(b) < 4+int(binary.BigEndian.Uint32(b)) {
			t.Fatalf("protobuf watch: a truncated frame (%x)", b)
		}
		n := binary.BigEndian.Uint32(b)
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(b[4 : 4+n]); err != nil {
			t.Fatalf("protobuf watch event: %v", err)
		}
		events = append(events, map[string]any{"type": ev.Type, "object": decode(ev.Object.Raw)})
		b = b[4+n:]
	}
	j, _ := json.Marshal(events)
	return j
}
