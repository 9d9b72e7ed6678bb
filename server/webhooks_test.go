//go:build !js

// The browser engine calls no webhooks (webhooks_js_test.go); a webhook
// server of the test's own needs a network.

package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kubeplay/server"
)

// webhookServer is a webhook server of the test's own on loopback, serving
// HTTPS with a certificate for 127.0.0.1 and for the service
// whsvc.default.svc, signed by a CA of its own. It answers each
// AdmissionReview as respond says for its path, and keeps the requests.
type webhookServer struct {
	*httptest.Server
	// caBundle is the CA's certificate, PEM, base64 as a caBundle is.
	caBundle string
	mu       sync.Mutex
	reviews  map[string][]map[string]any
	// queries and apiVersions are the last review's to each path.
	queries, apiVersions map[string]string
}

// webhookResponder makes the response of an AdmissionReview (its uid set
// after) to a path, or writes an answer of its own and returns nil.
type webhookResponder func(w http.ResponseWriter, r *http.Request, request map[string]any) map[string]any

func newWebhookServer(t *testing.T, respond webhookResponder) *webhookServer {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	template := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		DNSNames: []string{"whsvc.default.svc"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ws := &webhookServer{reviews: map[string][]map[string]any{}, queries: map[string]string{}, apiVersions: map[string]string{},
		caBundle: base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))}
	ws.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review struct {
			APIVersion string         `json:"apiVersion"`
			Request    map[string]any `json:"request"`
		}
		if err := json.Unmarshal(body, &review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ws.mu.Lock()
		ws.reviews[r.URL.Path] = append(ws.reviews[r.URL.Path], review.Request)
		ws.queries[r.URL.Path] = r.URL.RawQuery
		ws.apiVersions[r.URL.Path] = review.APIVersion
		ws.mu.Unlock()
		resp := respond(w, r, review.Request)
		if resp == nil {
			return
		}
		if _, ok := resp["uid"]; !ok {
			resp["uid"] = review.Request["uid"]
		}
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	// A client that does not trust the CA (a test's) is no news.
	ws.Config.ErrorLog = log.New(io.Discard, "", 0)
	ws.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ws.StartTLS()
	t.Cleanup(ws.Close)
	return ws
}

// received are the AdmissionReview requests path was sent.
func (ws *webhookServer) received(path string) []map[string]any {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.reviews[path]
}

func (ws *webhookServer) port() string {
	_, port, _ := net.SplitHostPort(ws.Listener.Addr().String())
	return port
}

// patch is a JSON patch response.
func patch(ops string) map[string]any {
	return map[string]any{"allowed": true, "patchType": "JSONPatch", "patch": base64.StdEncoding.EncodeToString([]byte(ops))}
}

// testResponder answers by path as the webhooks of the oracle check did.
func testResponder(w http.ResponseWriter, r *http.Request, request map[string]any) map[string]any {
	switch r.URL.Path {
	case "/deny":
		return map[string]any{"allowed": false, "status": map[string]any{"code": 403, "message": "no thanks", "reason": "Forbidden"}}
	case "/deny-bare":
		return map[string]any{"allowed": false}
	case "/deny-reason":
		return map[string]any{"allowed": false, "status": map[string]any{"reason": "SomeReason", "code": 418}}
	case "/warn":
		return map[string]any{"allowed": true, "warnings": []string{"careful now", "second warning"}, "auditAnnotations": map[string]string{"k": "v"}}
	case "/patch":
		return patch(`[{"op":"add","path":"/data/added","value":"by-webhook"}]`)
	case "/badpatch":
		return patch(`[{"op":"replace","path":"/nothere/x","value":"v"}]`)
	case "/garbagepatch":
		return patch(`{not json`)
	case "/nopatchtype":
		return map[string]any{"allowed": true, "patch": base64.StdEncoding.EncodeToString([]byte(`[]`))}
	case "/wronguid":
		return map[string]any{"allowed": true, "uid": "nope"}
	case "/slow":
		<-r.Context().Done() // until the caller gives up
		return nil
	case "/500":
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("boom"))
		return nil
	case "/patch-custom":
		return patch(`[{"op":"add","path":"/spec/size","value":3},{"op":"add","path":"/spec/extra","value":"dropped"}]`)
	case "/scale-to-3":
		return patch(`[{"op":"replace","path":"/spec/replicas","value":3}]`)
	case "/label-b":
		return patch(`[{"op":"add","path":"/metadata/labels/b","value":"set"}]`)
	case "/count-a":
		// Says how many labels it saw: reinvoked, it sees b.
		labels, _ := request["object"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
		return patch(fmt.Sprintf(`[{"op":"add","path":"/metadata/labels/a","value":"%d"}]`, len(labels)))
	}
	return map[string]any{"allowed": true}
}

// hook is one webhook of a configuration; fields override the defaults
// (every operation on configmaps, sideEffects None, review v1, timeout 5s).
func hook(name string, clientConfig map[string]any, fields map[string]any) map[string]any {
	h := map[string]any{
		"name":                    name,
		"clientConfig":            clientConfig,
		"rules":                   []any{map[string]any{"operations": []string{"*"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
		"sideEffects":             "None",
		"admissionReviewVersions": []string{"v1"},
		"timeoutSeconds":          5,
	}
	for k, v := range fields {
		h[k] = v
	}
	return h
}

func (ws *webhookServer) url(path string) map[string]any {
	return map[string]any{"url": ws.URL + path, "caBundle": ws.caBundle}
}

// configure creates a webhook configuration of kind (Mutating or
// Validating) with hooks.
func configure(t *testing.T, h http.Handler, kind, name string, hooks ...map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind + "WebhookConfiguration",
		"metadata": map[string]any{"name": name}, "webhooks": hooks})
	path := "/apis/admissionregistration.k8s.io/v1/" + strings.ToLower(kind) + "webhookconfigurations"
	if w := serve(h, http.MethodPost, path, "application/json", string(body)); w.Code != http.StatusCreated {
		t.Fatalf("%s configuration: %d %s", kind, w.Code, w.Body)
	}
}

const configMapsPath = "/api/v1/namespaces/default/configmaps"

func labelledConfigMap(name string, labels string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{%s}},"data":{"a":"b"}}`, name, labels)
}

// statusOf decodes a Status answer.
func statusOf(t *testing.T, body []byte) (code int, reason, message string) {
	t.Helper()
	var s struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return s.Code, s.Reason, s.Message
}

// TestWebhooks_Answers checks what a client gets for each answer of a
// webhook, or failure to get one: the codes, reasons and messages recorded
// from kube-apiserver v1.35 calling the same webhooks on loopback.
func TestWebhooks_Answers(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "https://" + closed.Addr().String() + "/x"
	closed.Close()
	for _, tc := range []struct {
		name, kind, path string
		fields           map[string]any
		url              string
		code             int
		reason, message  string
	}{
		{name: "deny", kind: "Validating", path: "/deny", code: 403, reason: "Forbidden",
			message: `admission webhook "deny.webhooks.test" denied the request: no thanks`},
		{name: "deny-bare", kind: "Validating", path: "/deny-bare", code: 400,
			message: `admission webhook "deny-bare.webhooks.test" denied the request without explanation`},
		{name: "deny-reason", kind: "Validating", path: "/deny-reason", code: 418, reason: "SomeReason",
			message: `admission webhook "deny-reason.webhooks.test" denied the request: SomeReason`},
		{name: "mutating-deny", kind: "Mutating", path: "/deny", code: 403, reason: "Forbidden",
			message: `admission webhook "mutating-deny.webhooks.test" denied the request: no thanks`},
		{name: "timeout", kind: "Validating", path: "/slow", fields: map[string]any{"timeoutSeconds": 1}, code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "timeout.webhooks.test": failed to call webhook: Post "` + ws.URL + `/slow?timeout=1s": context deadline exceeded`},
		{name: "timeout-ignored", kind: "Validating", path: "/slow", fields: map[string]any{"timeoutSeconds": 1, "failurePolicy": "Ignore"}, code: 201},
		{name: "refused", kind: "Validating", url: refused, code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "refused.webhooks.test": failed to call webhook: Post "` + refused + `?timeout=5s": dial tcp ` + strings.TrimSuffix(strings.TrimPrefix(refused, "https://"), "/x") + `: connect: connection refused`},
		{name: "refused-ignored", kind: "Mutating", url: refused, fields: map[string]any{"failurePolicy": "Ignore"}, code: 201},
		{name: "server-error", kind: "Validating", path: "/500", code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "server-error.webhooks.test": failed to call webhook: an error on the server ("boom") has prevented the request from succeeding`},
		{name: "validating-patch", kind: "Validating", path: "/patch", code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "validating-patch.webhooks.test": received invalid webhook response: validating webhook may not return response.patch`},
		{name: "bad-patch", kind: "Mutating", path: "/badpatch", code: 500, reason: "InternalError",
			message: `Internal error occurred: replace operation does not apply: doc is missing path: /nothere/x: missing value`},
		{name: "garbage-patch", kind: "Mutating", path: "/garbagepatch", code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "garbage-patch.webhooks.test": received undecodable patch in webhook response: invalid character 'n' looking for beginning of object key string`},
		{name: "no-patch-type", kind: "Mutating", path: "/nopatchtype", code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "no-patch-type.webhooks.test": received invalid webhook response: webhook returned response.patch but not response.patchType`},
		{name: "condition-error", kind: "Mutating", path: "/deny", fields: map[string]any{"matchConditions": []any{
			map[string]any{"name": "bad", "expression": `object.data.nothere == "x"`}}}, code: 403, reason: "Forbidden",
			message: `configmaps "c" is forbidden: expression 'object.data.nothere == "x"' resulted in error: no such key: nothere`},
		{name: "condition-error-ignored", kind: "Mutating", path: "/deny", fields: map[string]any{"failurePolicy": "Ignore", "matchConditions": []any{
			map[string]any{"name": "bad", "expression": `object.data.nothere == "x"`}}}, code: 201},
		{name: "untrusted", kind: "Validating", path: "/deny", fields: map[string]any{"clientConfig": map[string]any{"url": ws.URL + "/deny"}}, code: 500, reason: "InternalError",
			message: `Internal error occurred: failed calling webhook "untrusted.webhooks.test": failed to call webhook: Post "` + ws.URL + `/deny?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestServer(t)
			cc := ws.url(tc.path)
			if tc.url != "" {
				cc = map[string]any{"url": tc.url, "caBundle": ws.caBundle}
			}
			configure(t, h, tc.kind, "test", hook(tc.name+".webhooks.test", cc, tc.fields))
			w := serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
			if w.Code != tc.code {
				t.Fatalf("got %d, want %d: %s", w.Code, tc.code, w.Body)
			}
			if tc.code == http.StatusCreated {
				return
			}
			if code, reason, message := statusOf(t, w.Body.Bytes()); code != tc.code || reason != tc.reason || message != tc.message {
				t.Errorf("got %d %q %q\nwant %d %q %q", code, reason, message, tc.code, tc.reason, tc.message)
			}
		})
	}
}

// TestWebhooks_WrongUID checks the answer to a response for another
// AdmissionReview (its uid is the review's, a fresh one each time).
func TestWebhooks_WrongUID(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	configure(t, h, "Validating", "test", hook("uid.webhooks.test", ws.url("/wronguid"), nil))
	w := serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
	uid := ws.received("/wronguid")[0]["uid"]
	want := fmt.Sprintf(`Internal error occurred: failed calling webhook "uid.webhooks.test": received invalid webhook response: expected response.uid=%q, got "nope"`, uid)
	if _, _, message := statusOf(t, w.Body.Bytes()); w.Code != 500 || message != want {
		t.Fatalf("%d %s", w.Code, message)
	}
}

// TestWebhooks_Review checks the AdmissionReviews a webhook receives for a
// create, an update and a delete, and the warnings it returns.
func TestWebhooks_Review(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	configure(t, h, "Validating", "test", hook("warn.webhooks.test", ws.url("/warn"), nil))
	w := serve(h, http.MethodPost, configMapsPath+"?fieldManager=me", "application/json", labelledConfigMap("c", ""))
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	if got := w.Header().Values("Warning"); strings.Join(got, "|") != `299 - "careful now"|299 - "second warning"` {
		t.Errorf("warnings: %q", got)
	}
	if q := ws.queries["/warn"]; q != "timeout=5s" {
		t.Errorf("query %q", q)
	}
	create := ws.received("/warn")[0]
	gvk := map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}
	gvr := map[string]any{"group": "", "version": "v1", "resource": "configmaps"}
	for k, want := range map[string]any{"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
		"name": "c", "namespace": "default", "operation": "CREATE", "dryRun": false, "oldObject": nil,
		"options": map[string]any{"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "me"}} {
		if got := create[k]; jsonString(t, got) != jsonString(t, want) {
			t.Errorf("create: %s = %s, want %s", k, jsonString(t, got), jsonString(t, want))
		}
	}
	if s, _ := create["uid"].(string); s == "" {
		t.Errorf("no uid: %v", create)
	}
	if _, ok := create["subResource"]; ok {
		t.Errorf("subResource: %v", create)
	}
	user, _ := create["userInfo"].(map[string]any)
	if user["username"] != "system:anonymous" {
		t.Errorf("userInfo: %v", user)
	}
	// The validating phase sees the object as it will be stored.
	md := create["object"].(map[string]any)["metadata"].(map[string]any)
	if md["uid"] == nil || md["creationTimestamp"] == nil || md["managedFields"] == nil {
		t.Errorf("object metadata: %v", md)
	}

	update := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"changed"}}`
	if w := serve(h, http.MethodPut, configMapsPath+"/c?dryRun=All", "application/json", update); w.Code != http.StatusOK {
		t.Fatalf("update: %d %s", w.Code, w.Body)
	}
	put := ws.received("/warn")[1]
	if put["operation"] != "UPDATE" || put["dryRun"] != true || jsonString(t, put["options"]) != `{"apiVersion":"meta.k8s.io/v1","dryRun":["All"],"kind":"UpdateOptions"}` {
		t.Errorf("update review: %v %v %v", put["operation"], put["dryRun"], put["options"])
	}
	if old, _ := put["oldObject"].(map[string]any); old["data"].(map[string]any)["a"] != "b" || put["object"].(map[string]any)["data"].(map[string]any)["a"] != "changed" {
		t.Errorf("update objects: %v / %v", put["oldObject"], put["object"])
	}

	if w := serve(h, http.MethodDelete, configMapsPath+"/c", "", ""); w.Code != http.StatusOK {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	del := ws.received("/warn")[2]
	if del["operation"] != "DELETE" || del["object"] != nil || del["oldObject"] == nil || del["options"].(map[string]any)["kind"] != "DeleteOptions" {
		t.Errorf("delete review: %v", del)
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWebhooks_Mutation checks that a mutating webhook's patch lands, that
// its change is nobody's in managedFields (as kube-apiserver records it),
// and that validating webhooks see the patched object.
func TestWebhooks_Mutation(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	configure(t, h, "Mutating", "test", hook("patch.webhooks.test", ws.url("/patch"), nil))
	configure(t, h, "Validating", "test", hook("allow.webhooks.test", ws.url("/allow"), nil))
	for _, step := range []struct{ method, path, body string }{
		{http.MethodPost, configMapsPath, labelledConfigMap("c", "")},
		{http.MethodPut, configMapsPath + "/c?fieldManager=updater", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"changed"}}`},
	} {
		w := serve(h, step.method, step.path, "application/json", step.body)
		if w.Code >= 300 {
			t.Fatalf("%s: %d %s", step.method, w.Code, w.Body)
		}
		var cm struct {
			Metadata struct {
				ManagedFields []map[string]any `json:"managedFields"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		json.Unmarshal(w.Body.Bytes(), &cm)
		if cm.Data["added"] != "by-webhook" {
			t.Errorf("%s: data %v", step.method, cm.Data)
		}
		if strings.Contains(jsonString(t, cm.Metadata.ManagedFields), "added") {
			t.Errorf("%s: managedFields %s", step.method, jsonString(t, cm.Metadata.ManagedFields))
		}
	}
	// The mutating webhook saw the object before the server set its uid.
	first := ws.received("/patch")[0]["object"].(map[string]any)["metadata"].(map[string]any)
	if first["uid"] != nil || first["managedFields"] == nil {
		t.Errorf("mutating review's metadata: %v", first)
	}
	// On the update, it saw the managedFields the update records.
	second := ws.received("/patch")[1]["object"].(map[string]any)["metadata"].(map[string]any)
	if mf := jsonString(t, second["managedFields"]); !strings.Contains(mf, `"manager":"updater"`) || strings.Contains(mf, "added") {
		t.Errorf("mutating review's managedFields on update: %s", mf)
	}
	for i, r := range ws.received("/allow") {
		if r["object"].(map[string]any)["data"].(map[string]any)["added"] != "by-webhook" {
			t.Errorf("validating review %d: %v", i, r["object"])
		}
	}
	w := serve(h, http.MethodGet, configMapsPath+"/c", "", "")
	if !strings.Contains(w.Body.String(), `"added":"by-webhook"`) {
		t.Errorf("stored: %s", w.Body)
	}
}

// TestWebhooks_Reinvocation checks that a webhook with reinvocationPolicy
// IfNeeded is called again when a later webhook changed the object.
func TestWebhooks_Reinvocation(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	configure(t, h, "Mutating", "a", hook("count.webhooks.test", ws.url("/count-a"), map[string]any{"reinvocationPolicy": "IfNeeded"}))
	configure(t, h, "Mutating", "b", hook("label.webhooks.test", ws.url("/label-b"), nil))
	w := serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", `"x":"y"`))
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	if n := len(ws.received("/count-a")); n != 2 {
		t.Errorf("count-a called %d times", n)
	}
	if n := len(ws.received("/label-b")); n != 1 {
		t.Errorf("label-b called %d times", n)
	}
	// First it saw x, then x and b (and its own a).
	if !strings.Contains(w.Body.String(), `"labels":{"a":"3","b":"set","x":"y"}`) {
		t.Errorf("created: %s", w.Body)
	}
}

// TestWebhooks_Matching checks which requests call a webhook: its
// selectors, matchConditions, rules (subresources too) and matchPolicy.
func TestWebhooks_Matching(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	if w := serve(h, http.MethodPost, "/api/v1/namespaces", "application/json", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"chosen","labels":{"env":"test"}}}`); w.Code != http.StatusCreated {
		t.Fatalf("namespace: %d %s", w.Code, w.Body)
	}
	configure(t, h, "Validating", "test",
		hook("objects.webhooks.test", ws.url("/objects"), map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]string{"pick": "me"}}}),
		hook("namespaces.webhooks.test", ws.url("/namespaces"), map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]string{"env": "test"}}}),
		hook("conditions.webhooks.test", ws.url("/conditions"), map[string]any{"matchConditions": []any{
			map[string]any{"name": "prefix", "expression": `object.metadata.name.startsWith("cond")`}}}),
		hook("status.webhooks.test", ws.url("/status"), map[string]any{"rules": []any{map[string]any{"operations": []string{"UPDATE"},
			"apiGroups": []string{"apps"}, "apiVersions": []string{"*"}, "resources": []string{"deployments/status"}}}}),
		hook("equivalent.webhooks.test", ws.url("/equivalent"), map[string]any{"rules": []any{map[string]any{"operations": []string{"CREATE"},
			"apiGroups": []string{"autoscaling"}, "apiVersions": []string{"v1"}, "resources": []string{"horizontalpodautoscalers"}}}}),
		hook("exact.webhooks.test", ws.url("/exact"), map[string]any{"matchPolicy": "Exact", "rules": []any{map[string]any{"operations": []string{"CREATE"},
			"apiGroups": []string{"autoscaling"}, "apiVersions": []string{"v1"}, "resources": []string{"horizontalpodautoscalers"}}}}),
	)
	for _, c := range []struct{ ns, name, labels string }{{"default", "plain", ""}, {"default", "picked", `"pick":"me"`}, {"chosen", "inchosen", ""}, {"default", "conditional", ""}} {
		if w := serve(h, http.MethodPost, "/api/v1/namespaces/"+c.ns+"/configmaps", "application/json", labelledConfigMap(c.name, c.labels)); w.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", c.name, w.Code, w.Body)
		}
	}
	names := func(path string) string {
		var out []string
		for _, r := range ws.received(path) {
			out = append(out, fmt.Sprint(r["name"]))
		}
		return strings.Join(out, ",")
	}
	for path, want := range map[string]string{"/objects": "picked", "/namespaces": "inchosen", "/conditions": "conditional"} {
		if got := names(path); got != want {
			t.Errorf("%s called for %q, want %q", path, got, want)
		}
	}

	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	if w := serve(h, http.MethodPost, "/apis/apps/v1/namespaces/default/deployments", "application/json", deployment); w.Code != http.StatusCreated {
		t.Fatalf("deployment: %d %s", w.Code, w.Body)
	}
	if w := serve(h, http.MethodPatch, "/apis/apps/v1/namespaces/default/deployments/d/status", "application/merge-patch+json", `{"status":{"observedGeneration":1}}`); w.Code != http.StatusOK {
		t.Fatalf("status: %d %s", w.Code, w.Body)
	}
	if got := ws.received("/status"); len(got) != 1 || got[0]["subResource"] != "status" || got[0]["requestSubResource"] != "status" {
		t.Errorf("status reviews: %v", got)
	}

	hpa := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":3}}`
	if w := serve(h, http.MethodPost, "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", "application/json", hpa); w.Code != http.StatusCreated {
		t.Fatalf("hpa: %d %s", w.Code, w.Body)
	}
	if n := len(ws.received("/exact")); n != 0 {
		t.Errorf("Exact webhook called %d times", n)
	}
	eq := ws.received("/equivalent")
	if len(eq) != 1 {
		t.Fatalf("Equivalent webhook called %d times", len(eq))
	}
	if got := jsonString(t, []any{eq[0]["kind"], eq[0]["requestKind"], eq[0]["object"].(map[string]any)["apiVersion"]}); got != `[{"group":"autoscaling","kind":"HorizontalPodAutoscaler","version":"v1"},{"group":"autoscaling","kind":"HorizontalPodAutoscaler","version":"v2"},"autoscaling/v1"]` {
		t.Errorf("Equivalent review: %s", got)
	}
}

// TestWebhooks_Service checks a webhook called by service: not found, no
// endpoints, then an ExternalName Service that names the test's server,
// trusted for the service's DNS name.
func TestWebhooks_Service(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	byService := map[string]any{"service": map[string]any{"namespace": "default", "name": "whsvc", "path": "/deny", "port": 8443}, "caBundle": ws.caBundle}
	configure(t, h, "Validating", "test", hook("svc.webhooks.test", byService, nil))

	w := serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
	want := `Internal error occurred: failed calling webhook "svc.webhooks.test": failed to call webhook: Post "https://whsvc.default.svc:8443/deny?timeout=5s": service "whsvc" not found`
	if _, _, message := statusOf(t, w.Body.Bytes()); message != want {
		t.Errorf("without service: %d %s", w.Code, message)
	}
	svc := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"whsvc"},"spec":{"ports":[{"name":"https","port":8443,"targetPort":443}]}}`
	if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/services", "application/json", svc); w.Code != http.StatusCreated {
		t.Fatalf("service: %d %s", w.Code, w.Body)
	}
	w = serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
	want = `Internal error occurred: failed calling webhook "svc.webhooks.test": failed to call webhook: Post "https://whsvc.default.svc:8443/deny?timeout=5s": no endpoints available for service "whsvc"`
	if _, _, message := statusOf(t, w.Body.Bytes()); message != want {
		t.Errorf("without endpoints: %d %s", w.Code, message)
	}
	// EndpointSlices list pods' addresses, never loopback ones; a local
	// process is reached as kube-apiserver reaches a host outside the
	// cluster: through an ExternalName Service, at the webhook's port.
	ext := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"whsvc"},"spec":{"type":"ExternalName","externalName":"localhost"}}`
	if w := serve(h, http.MethodDelete, "/api/v1/namespaces/default/services/whsvc", "", ""); w.Code != http.StatusOK {
		t.Fatalf("delete service: %d %s", w.Code, w.Body)
	}
	if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/services", "application/json", ext); w.Code != http.StatusCreated {
		t.Fatalf("external service: %d %s", w.Code, w.Body)
	}
	port, err := strconv.Atoi(ws.port())
	if err != nil {
		t.Fatal(err)
	}
	byService["service"].(map[string]any)["port"] = port
	configure(t, h, "Validating", "test-external", hook("svc.webhooks.test", byService, nil))
	if w := serve(h, http.MethodDelete, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/test", "", ""); w.Code != http.StatusOK {
		t.Fatalf("delete configuration: %d %s", w.Code, w.Body)
	}
	w = serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
	if _, _, message := statusOf(t, w.Body.Bytes()); w.Code != http.StatusForbidden || message != `admission webhook "svc.webhooks.test" denied the request: no thanks` {
		t.Errorf("by an ExternalName service: %d %s", w.Code, message)
	}
}

// convertResponder answers ConversionReviews for the widgets of
// conversionCRD: v1's spec.color is v2's spec.colour.
func convertResponder(w http.ResponseWriter, r *http.Request, request map[string]any) map[string]any {
	desired := request["desiredAPIVersion"].(string)
	var converted []any
	for _, o := range request["objects"].([]any) {
		obj := o.(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		from, to := "colour", "color"
		if strings.HasSuffix(desired, "/v2") {
			from, to = to, from
		}
		if v, ok := spec[from]; ok {
			spec[to] = v
			delete(spec, from)
		}
		obj["apiVersion"] = desired
		converted = append(converted, obj)
	}
	response := map[string]any{"uid": request["uid"], "convertedObjects": converted, "result": map[string]any{"status": "Success"}}
	if r.URL.Path == "/convert-fail" {
		response = map[string]any{"uid": request["uid"], "result": map[string]any{"status": "Failure", "message": "cannot convert that"}}
	}
	apiVersion := "apiextensions.k8s.io/v1"
	if _, ok := request["objects"]; ok && r.URL.Query().Get("beta") != "" {
		apiVersion = "apiextensions.k8s.io/v1beta1"
	}
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": apiVersion, "kind": "ConversionReview", "response": response})
	return nil
}

// conversionCRD is a CRD of kind with versions v1 (stored) and v2,
// converted by the webhook at url.
func conversionCRD(plural, kind string, clientConfig map[string]any, reviewVersions ...string) string {
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}
	b, _ := json.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".webhooks.example.com"},
		"spec": map[string]any{"group": "webhooks.example.com", "scope": "Namespaced",
			"names":      map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": clientConfig, "conversionReviewVersions": reviewVersions}},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": schema},
				map[string]any{"name": "v2", "served": true, "storage": false, "schema": schema},
			}}})
	return string(b)
}

// TestWebhooks_Conversion checks a CRD's conversion webhook: called to
// store an object sent in another version than the stored one and to read
// it back in that version, in the ConversionReview version it accepts,
// and kube-apiserver's errors when it fails (recorded from kube-apiserver
// v1.35 calling the same webhook).
func TestWebhooks_Conversion(t *testing.T) {
	ws := newWebhookServer(t, convertResponder)
	h := newTestServer(t)
	for _, crd := range []string{
		conversionCRD("widgets", "Widget", ws.url("/convert"), "v1"),
		conversionCRD("gadgets", "Gadget", map[string]any{"url": ws.URL + "/convert-fail?beta=1", "caBundle": ws.caBundle}, "v1beta1", "v1"),
	} {
		if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", crd); w.Code != http.StatusCreated {
			t.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
	}
	const base = "/apis/webhooks.example.com/"
	w := serve(h, http.MethodPost, base+"v2/namespaces/default/widgets", "application/json", `{"apiVersion":"webhooks.example.com/v2","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"red"}}`)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"spec":{"colour":"red"}`) {
		t.Fatalf("create v2: %d %s", w.Code, w.Body)
	}
	reviews := ws.received("/convert")
	if len(reviews) != 2 || reviews[0]["desiredAPIVersion"] != "webhooks.example.com/v1" || reviews[1]["desiredAPIVersion"] != "webhooks.example.com/v2" {
		t.Errorf("conversions: %v", reviews)
	}
	if q, v := ws.queries["/convert"], ws.apiVersions["/convert"]; q != "timeout=30s" || v != "apiextensions.k8s.io/v1" {
		t.Errorf("review: %q %q", q, v)
	}
	if w := serve(h, http.MethodGet, base+"v1/namespaces/default/widgets/w", "", ""); !strings.Contains(w.Body.String(), `"spec":{"color":"red"}`) {
		t.Errorf("stored: %d %s", w.Code, w.Body)
	}
	if w := serve(h, http.MethodGet, base+"v2/namespaces/default/widgets", "", ""); !strings.Contains(w.Body.String(), `"spec":{"colour":"red"}`) {
		t.Errorf("list v2: %d %s", w.Code, w.Body)
	}
	// A list is converted one object a review, as kube-apiserver v1.35
	// converts each object into the watch cache its lists are served from
	// (asked with a webhook of its own on loopback: three objects, three
	// reviews of one object each).
	if w := serve(h, http.MethodPost, base+"v1/namespaces/default/widgets", "application/json", `{"apiVersion":"webhooks.example.com/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"color":"blue"}}`); w.Code != http.StatusCreated {
		t.Fatalf("create v1: %d %s", w.Code, w.Body)
	}
	before := len(ws.received("/convert"))
	if w := serve(h, http.MethodGet, base+"v2/namespaces/default/widgets", "", ""); !strings.Contains(w.Body.String(), `"spec":{"colour":"blue"}`) {
		t.Errorf("list v2: %d %s", w.Code, w.Body)
	}
	listed := ws.received("/convert")[before:]
	if len(listed) != 2 || len(listed[0]["objects"].([]any)) != 1 || len(listed[1]["objects"].([]any)) != 1 {
		t.Errorf("list conversions: %v", listed)
	}

	if w := serve(h, http.MethodPost, base+"v1/namespaces/default/gadgets", "application/json", `{"apiVersion":"webhooks.example.com/v1","kind":"Gadget","metadata":{"name":"g"}}`); w.Code != http.StatusCreated {
		t.Fatalf("create v1: %d %s", w.Code, w.Body)
	}
	if len(ws.received("/convert-fail")) != 0 {
		t.Errorf("the stored version needs no conversion")
	}
	for _, c := range []struct{ method, path, body, from string }{
		{http.MethodGet, base + "v2/namespaces/default/gadgets/g", "", "v1"},
		{http.MethodGet, base + "v2/namespaces/default/gadgets", "", "v1"},
		{http.MethodPost, base + "v2/namespaces/default/gadgets", `{"apiVersion":"webhooks.example.com/v2","kind":"Gadget","metadata":{"name":"h"}}`, "v2"},
	} {
		w := serve(h, c.method, c.path, "application/json", c.body)
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"conversion webhook for webhooks.example.com/` + c.from + `, Kind=Gadget failed: cannot convert that","code":500}`
		if got := strings.TrimSpace(w.Body.String()); w.Code != http.StatusInternalServerError || got != want {
			t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, got)
		}
	}
	if v := ws.apiVersions["/convert-fail"]; v != "apiextensions.k8s.io/v1beta1" {
		t.Errorf("review version %q", v)
	}
}

// TestWebhooks_CallsOff checks a server that calls no webhooks (a hosted
// playground): each call fails as an unreachable webhook's, as
// failurePolicy says.
func TestWebhooks_CallsOff(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServerWith(t, server.Options{NoWebhookCalls: true})
	configure(t, h, "Validating", "test", hook("deny.webhooks.test", ws.url("/deny"), nil))
	w := serve(h, http.MethodPost, configMapsPath, "application/json", labelledConfigMap("c", ""))
	want := `Internal error occurred: failed calling webhook "deny.webhooks.test": failed to call webhook: Post "` + ws.URL + `/deny?timeout=5s": this server calls no webhooks`
	if _, _, message := statusOf(t, w.Body.Bytes()); w.Code != http.StatusInternalServerError || message != want {
		t.Errorf("%d %s", w.Code, message)
	}
	if n := len(ws.received("/deny")); n != 0 {
		t.Errorf("called %d times", n)
	}
}

// TestWebhooks_MutatedCustomObject checks that what a mutating webhook adds
// to a custom object goes through its schema: unknown fields dropped
// without a warning (the client did not send them), known ones kept.
func TestWebhooks_MutatedCustomObject(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"boxes.webhooks.example.com"},
"spec":{"group":"webhooks.example.com","scope":"Namespaced","names":{"plural":"boxes","singular":"box","kind":"Box","listKind":"BoxList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","maximum":5}}}}}}}]}}`
	if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", crd); w.Code != http.StatusCreated {
		t.Fatalf("CRD: %d %s", w.Code, w.Body)
	}
	configure(t, h, "Mutating", "test", hook("box.webhooks.test", ws.url("/patch-custom"), map[string]any{"rules": []any{map[string]any{"operations": []string{"CREATE"},
		"apiGroups": []string{"webhooks.example.com"}, "apiVersions": []string{"v1"}, "resources": []string{"boxes"}}}}))
	w := serve(h, http.MethodPost, "/apis/webhooks.example.com/v1/namespaces/default/boxes", "application/json", `{"apiVersion":"webhooks.example.com/v1","kind":"Box","metadata":{"name":"b"},"spec":{}}`)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"spec":{"size":3}`) || w.Header().Get("Warning") != "" {
		t.Errorf("%d %q %s", w.Code, w.Header().Get("Warning"), w.Body)
	}
}

// TestWebhooks_MutatedScale checks that mutating webhooks registered for
// deployments/scale, and for a custom resource's scale, are sent the
// Scales (autoscaling/v1, subResource scale) of a PUT or a patch of /scale,
// and that the replicas their patch sets are what is stored, what the
// validating webhooks see, and what the client is answered.
func TestWebhooks_MutatedScale(t *testing.T) {
	ws := newWebhookServer(t, testResponder)
	h := newTestServer(t)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crews.webhooks.example.com"},
"spec":{"group":"webhooks.example.com","scope":"Namespaced","names":{"plural":"crews","singular":"crew","kind":"Crew","listKind":"CrewList"},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},"status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`
	if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", crd); w.Code != http.StatusCreated {
		t.Fatalf("CRD: %d %s", w.Code, w.Body)
	}
	rules := func(group, resource string) map[string]any {
		return map[string]any{"rules": []any{map[string]any{"operations": []string{"UPDATE"},
			"apiGroups": []string{group}, "apiVersions": []string{"v1"}, "resources": []string{resource + "/scale"}}}}
	}
	configure(t, h, "Mutating", "scale", hook("deployments.webhooks.test", ws.url("/scale-to-3"), rules("apps", "deployments")),
		hook("crews.webhooks.test", ws.url("/scale-to-3"), rules("webhooks.example.com", "crews")))
	configure(t, h, "Validating", "scale", hook("allow.webhooks.test", ws.url("/allow"), rules("*", "*")))
	const deployments = "/apis/apps/v1/namespaces/default/deployments"
	const crews = "/apis/webhooks.example.com/v1/namespaces/default/crews"
	for _, create := range []struct{ path, body string }{
		{deployments, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`},
		{crews, `{"apiVersion":"webhooks.example.com/v1","kind":"Crew","metadata":{"name":"web"},"spec":{"replicas":1}}`},
	} {
		if w := serve(h, http.MethodPost, create.path, "application/json", create.body); w.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
	}
	for _, step := range []struct{ method, path, contentType, body string }{
		{http.MethodPut, deployments + "/web/scale", "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":5}}`},
		{http.MethodPatch, deployments + "/web/scale", "application/merge-patch+json", `{"spec":{"replicas":7}}`},
		{http.MethodPut, crews + "/web/scale", "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":5}}`},
	} {
		w := serve(h, step.method, step.path, step.contentType, step.body)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"spec":{"replicas":3}`) {
			t.Errorf("%s %s: %d %s", step.method, step.path, w.Code, w.Body)
		}
		parent := strings.TrimSuffix(step.path, "/scale")
		if w := serve(h, http.MethodGet, parent, "", ""); !strings.Contains(w.Body.String(), `"replicas":3`) {
			t.Errorf("stored %s: %s", parent, w.Body)
		}
	}
	reviews := ws.received("/scale-to-3")
	if len(reviews) != 3 {
		t.Fatalf("%d mutating reviews, want 3", len(reviews))
	}
	for i, r := range reviews {
		object, _ := r["object"].(map[string]any)
		if kind := jsonString(t, r["kind"]); kind != `{"group":"autoscaling","kind":"Scale","version":"v1"}` || r["subResource"] != "scale" || object["kind"] != "Scale" {
			t.Errorf("review %d: kind %s, subResource %v, object %v", i, kind, r["subResource"], object)
		}
	}
	for i, r := range ws.received("/allow") {
		if replicas := r["object"].(map[string]any)["spec"].(map[string]any)["replicas"]; replicas != float64(3) {
			t.Errorf("validating review %d saw replicas %v", i, replicas)
		}
	}
}
