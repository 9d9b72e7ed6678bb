package app

import (
	"crypto"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/util/keyutil"

	"kubeplay/server"
)

// serviceAccountIssuer reads the flags that configure kube-apiserver's
// ServiceAccount token issuer (--service-account-issuer,
// --service-account-signing-key-file, --service-account-key-file,
// --api-audiences, --service-account-jwks-uri), checking them as
// kube-apiserver does. nil when none is given: kube-apiserver refuses to
// start then, kubeplay signs with a key of its own.
func serviceAccountIssuer(cl *commandLine, port string) (*server.ServiceAccountIssuer, error) {
	issuers := cl.values["service-account-issuer"]
	signingKeyFile := cl.value("service-account-signing-key-file")
	keyFiles := cl.values["service-account-key-file"]
	cfg := &server.ServiceAccountIssuer{Issuers: issuers, Audiences: cl.list("api-audiences"), JWKSURI: cl.value("service-account-jwks-uri")}
	if len(issuers) == 0 && signingKeyFile == "" && len(keyFiles) == 0 && len(cfg.Audiences) == 0 && cfg.JWKSURI == "" {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, issuer := range issuers {
		if strings.Contains(issuer, ":") {
			if _, err := url.Parse(issuer); err != nil {
				return nil, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", issuer, err)
			}
		}
		if issuer == "" {
			return nil, errors.New("service-account-issuer should not be an empty string")
		}
		if seen[issuer] {
			return nil, fmt.Errorf("service-account-issuer %q is already specified", issuer)
		}
		seen[issuer] = true
	}
	switch {
	case len(issuers) == 0:
		return nil, errors.New("service-account-issuer is a required flag")
	case len(keyFiles) == 0:
		return nil, errors.New("either `--service-account-key-file` or `--service-account-signing-endpoint` must be set")
	case signingKeyFile == "":
		return nil, errors.New("--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together")
	}
	if cfg.JWKSURI != "" {
		if u, err := url.Parse(cfg.JWKSURI); err != nil {
			return nil, fmt.Errorf("service-account-jwks-uri must be a valid URL: %v", err)
		} else if u.Scheme != "https" {
			return nil, fmt.Errorf("service-account-jwks-uri requires https scheme, parsed as: %v", u.String())
		}
	} else {
		host := externalHost(cl)
		if _, _, err := net.SplitHostPort(host); err != nil { // --external-hostname may name the port
			host = net.JoinHostPort(host, port)
		}
		cfg.JWKSURI = (&url.URL{Scheme: "https", Host: host, Path: "/openid/v1/jwks"}).String()
	}

	key, err := keyutil.PrivateKeyFromFile(signingKeyFile)
	if err != nil {
		return nil, fmt.Errorf("failed to parse service-account-issuer-key-file: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("failed to build token generator: unsupported private key type %T", key)
	}
	cfg.SigningKey = signer
	for _, file := range keyFiles {
		keys, err := keyutil.PublicKeysFromFile(file)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			cfg.PublicKeys = append(cfg.PublicKeys, k)
		}
	}
	return cfg, nil
}

// externalHost is the host kube-apiserver names in the URLs it publishes:
// --external-hostname, else --advertise-address, else the address it
// listens on, or the host's address when that is a loopback or unspecified
// one. Where the host has none (no default route), kube-apiserver does not
// start; kubeplay names the loopback address instead, as the URL matters
// to no test.
func externalHost(cl *commandLine) string {
	if host := cl.value("external-hostname"); host != "" {
		return host
	}
	advertise := net.ParseIP(cl.value("advertise-address"))
	if advertise != nil && !advertise.IsUnspecified() {
		return advertise.String()
	}
	ip, err := utilnet.ResolveBindAddress(net.ParseIP(cl.value("bind-address")))
	if err != nil {
		return "127.0.0.1"
	}
	return ip.String()
}
