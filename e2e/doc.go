// Package e2e runs kubeplay end to end, as its users do: the kubeplay
// binary serving on a port, and kubectl (or client-go, or a browser)
// talking to it. Its tests start servers with Start and run kubectl with
// Kubectl; a test package using them calls Main from its TestMain.
package e2e
