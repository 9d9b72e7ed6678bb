package playground

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// KubeconfigOptions say what a kubeconfig holds.
type KubeconfigOptions struct {
	// Server is the API's URL.
	Server string
	// Token is the user's bearer token (none: anonymous).
	Token string
	// CAPath names a file, CAData holds the PEM, of the certificate to
	// trust for an https server (neither: the system's roots).
	CAPath string
	CAData []byte
}

// Kubeconfig returns a kubeconfig for kubectl and client-go.
func Kubeconfig(o KubeconfigOptions) string {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a YAML string
	cluster := ""
	switch {
	case strings.HasPrefix(o.Server, "http://"):
		// Nothing to verify, but @kubernetes/client-node refuses a plain
		// HTTP server unless this is set.
		cluster = "\n    insecure-skip-tls-verify: true"
	case o.CAPath != "":
		cluster = "\n    certificate-authority: " + quote(o.CAPath)
	case len(o.CAData) > 0:
		cluster = "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(o.CAData)
	}
	user := " {}"
	if o.Token != "" {
		user = "\n    token: " + quote(o.Token)
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
`, quote(o.Server), cluster, user)
}
