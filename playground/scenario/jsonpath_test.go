package scenario

import (
	"encoding/json"
	"testing"
)

func TestEvalPath(t *testing.T) {
	var doc any
	json.Unmarshal([]byte(`{"items": [
		{"metadata": {"name": "a", "namespace": "x", "labels": {"app.kubernetes.io/name": "one"}}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
		{"metadata": {"name": "b", "namespace": "y"}, "spec": {"replicas": 2}}]}`), &doc)
	for _, tc := range []struct{ expr, want string }{
		{"{.items[0].metadata.name}", `"a"`},
		{"{.items[-1].spec.replicas}", `2`},
		{"{.items[*].metadata.name}", `["a","b"]`},
		{`{.items[?(@.metadata.namespace=="y")].metadata.name}`, `["b"]`},
		{`{.items[?(@.spec.replicas==2)].metadata.name}`, `["b"]`},
		{`{.items[0].status.conditions[?(@.type=="Ready")].status}`, `["True"]`},
		{`{.items[0].metadata.labels['app.kubernetes.io/name']}`, `"one"`},
		{`{.items[?(@.metadata.namespace=="z")].metadata.name}`, `[]`},
	} {
		got, err := evalPath(doc, tc.expr)
		if b, _ := json.Marshal(got); err != nil || string(b) != tc.want {
			t.Errorf("%s = %s (%v), want %s", tc.expr, b, err, tc.want)
		}
	}
	if _, err := evalPath(doc, "{.items[0].nope}"); err != errNotFound {
		t.Errorf("a missing field: %v", err)
	}
}
