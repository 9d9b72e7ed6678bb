//go:build !js

package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
)

// post sends body to u over HTTPS (or HTTP, if u says so): a transport of
// its own per call, trusting e's caBundle, closed after the answer.
func post(ctx context.Context, e Endpoint, u *url.URL, body []byte) (int, []byte, error) {
	tlsConfig := &tls.Config{ServerName: e.ServerName, MinVersion: tls.VersionTLS12}
	if len(e.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(e.CABundle) {
			return 0, nil, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	var dialer net.Dialer
	transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: false,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if e.Dial != nil && addr == u.Host {
				var err error
				if addr, err = e.Dial(ctx); err != nil {
					return nil, err
				}
			}
			return dialer.DialContext(ctx, network, addr)
		}}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, answer, nil
}
