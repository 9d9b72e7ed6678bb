package playground

import (
	"encoding/json"
	"fmt"
)

// Kubeconfig returns a kubeconfig for kubectl and client-go that reaches the
// API at server, as token's user (none: anonymous), trusting the
// certificate in the file caPath ("": the system's roots).
func Kubeconfig(server, token, caPath string) string {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a YAML string
	cluster := ""
	if caPath != "" {
		cluster = "\n    certificate-authority: " + quote(caPath)
	}
	user := " {}"
	if token != "" {
		user = "\n    token: " + quote(token)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubeplay
  cluster:
    server: %s%s
users:
- name: kubeplay
  user:%s
contexts:
- name: kubeplay
  context:
    cluster: kubeplay
    user: kubeplay
    namespace: default
current-context: kubeplay
`, quote(server), cluster, user)
}
