package yamlview

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestText(t *testing.T) {
	var obj any
	if err := json.Unmarshal([]byte(`{"kind":"Pod","metadata":{"name":"a","labels":{"app":"<b>x</b>","yes":"true"},"finalizers":[]},
		"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"env":{}}],"n":null,"ok":true,"x":"multi\nline"}}`), &obj); err != nil {
		t.Fatal(err)
	}
	want := `kind: Pod
metadata:
  finalizers: []
  labels:
    app: <b>x</b>
    "yes": "true"
  name: a
spec:
  containers:
  - env: {}
    image: nginx
    name: c
    ports:
    - containerPort: 80
  "n": null
  ok: true
  x: "multi\nline"
`
	if got := Text(obj); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	lines := Lines(obj, ByIndex)
	if got := lines[9].Path.String(); got != ".spec.containers[0].env" {
		t.Errorf("path of %q: %s", lines[9].Text(), got)
	}
	if got := lines[9].Item.String(); got != ".spec.containers[0]" {
		t.Errorf("item of %q: %s", lines[9].Text(), got)
	}
	if got := lines[13].Path.String(); got != ".spec.containers[0].ports[0].containerPort" {
		t.Errorf("path of %q: %s", lines[13].Text(), got)
	}
}

// plain strings are exactly those the YAML encoder prints unquoted.
func TestPlain(t *testing.T) {
	for _, s := range []string{"nginx", "v1", "kube-system", "a.b/c_d", "Yes", "yes", "y", "N", "on", "OFF", "true", "Null",
		"x1e3", "ConfigMap", "app.kubernetes.io/name", "e", "Infinity", "nan", "NaN", "inf", "a:b", "1abc", "~", ".inf", "-a"} {
		b, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if plain(s) && string(b) != s+"\n" {
			t.Errorf("plain(%q), but YAML prints %q", s, b)
		}
	}
}
