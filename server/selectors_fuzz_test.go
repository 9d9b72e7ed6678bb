package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// FuzzSelectors lists and watches with arbitrary label and field selectors:
// every answer is a 200 or a 400 BadRequest Status, and a list of config
// maps holds exactly the objects the selectors select.
func FuzzSelectors(f *testing.F) {
	for _, s := range [][2]string{
		{"app=web", ""}, {"app==web,tier!=db", "metadata.name=a"}, {"app in (web,db),!legacy", "metadata.name!=b"},
		{"tier notin (db)", "metadata.namespace=fuzz"}, {"app", "status.phase=Running"}, {"!app", "spec.nodeName=n"},
		{"a>1,b<3", ""}, {"a in (b", "a~b"}, {"x=y=z", "a in (b)"}, {"", "metadata.name==a,metadata.name!=b"},
		{"example.com/app=web", `metadata.name=a\,b`}, {"-x", "spec.hostNetwork=true"},
	} {
		f.Add(s[0], s[1])
	}
	h := newTestServer(f)
	srv := httptest.NewServer(h)
	defer srv.Close()
	seed := []map[string]string{{"app": "web", "tier": "fe"}, {"app": "db", "tier": "db"}, {"legacy": "true"}, {"a": "2", "b": "1"}, {}}
	for i, l := range seed {
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": string(rune('a' + i)), "labels": l}})
		resp, err := http.Post(srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(string(body)))
		if err != nil || resp.StatusCode != http.StatusCreated {
			f.Fatalf("seed: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	f.Fuzz(func(t *testing.T, labelSelector, fieldSelector string) {
		// The timeout ends a request that hangs (a watch that does not end).
		client := &http.Client{Timeout: waitLimit(t)}
		q := url.Values{"labelSelector": {labelSelector}, "fieldSelector": {fieldSelector}}
		for _, path := range []string{"/api/v1/namespaces/default/configmaps?", "/api/v1/pods?", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=-1&"} {
			resp, err := client.Get(srv.URL + path + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Kind   string `json:"kind"`
				Reason string `json:"reason"`
				Items  []struct {
					Metadata struct {
						Name   string            `json:"name"`
						Labels map[string]string `json:"labels"`
					} `json:"metadata"`
				} `json:"items"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusBadRequest && body.Reason == "BadRequest":
			case resp.StatusCode == http.StatusOK:
				if body.Kind != "ConfigMapList" {
					continue
				}
				ls, err := labels.Parse(labelSelector)
				if err != nil {
					t.Fatalf("%s: listed with an unparsable label selector %q", path, labelSelector)
				}
				fs, err := fields.ParseSelector(fieldSelector)
				if err != nil {
					t.Fatalf("%s: listed with an unparsable field selector %q", path, fieldSelector)
				}
				var want, got []string
				for i, l := range seed {
					name := string(rune('a' + i))
					if ls.Matches(labels.Set(l)) && fs.Matches(fields.Set{"metadata.name": name, "metadata.namespace": "default"}) {
						want = append(want, name)
					}
				}
				for _, it := range body.Items {
					got = append(got, it.Metadata.Name)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s%s: listed %v, want %v", path, q.Encode(), got, want)
				}
			default:
				t.Errorf("%s%s: %d %s", path, q.Encode(), resp.StatusCode, body.Reason)
			}
		}
	})
}
