package app

import (
	"net"

	"kubeplay/playground/api"
)

// sandboxAddresses gives the playground API's sandboxes ports of their own
// beside l, on the same interface and with the same TLS.
func sandboxAddresses(l *listener) *api.Addresses {
	host, _, _ := net.SplitHostPort(l.Addr().String())
	return &api.Addresses{
		Listen: func() (net.Listener, error) { return net.Listen("tcp", net.JoinHostPort(host, "0")) },
		TLS:    l.tls,
	}
}
