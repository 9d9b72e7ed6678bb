package authn_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"kubeplay/server/authn"
)

func TestSigner_Sign(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]crypto.Signer{"RS256": rsaKey}
	for alg, curve := range map[string]elliptic.Curve{"ES256": elliptic.P256(), "ES384": elliptic.P384(), "ES512": elliptic.P521()} {
		if keys[alg], err = ecdsa.GenerateKey(curve, rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	var all []authn.PublicKey
	for _, key := range keys {
		pub, err := authn.NewPublicKey(key.Public())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, pub)
	}
	for alg, key := range keys {
		t.Run(alg, func(t *testing.T) {
			s, err := authn.NewSigner(key)
			if err != nil {
				t.Fatal(err)
			}
			token, err := s.Sign(map[string]string{"sub": "alice"})
			if err != nil {
				t.Fatal(err)
			}
			var header struct{ Alg, Kid string }
			b, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
			if json.Unmarshal(b, &header); header.Alg != alg || header.Kid != s.PublicKey().JWK().Kid {
				t.Errorf("header %s", b)
			}
			var claims struct{ Sub string }
			if err := authn.Verify(token, all, &claims); err != nil || claims.Sub != "alice" {
				t.Errorf("Verify with every key: %v, claims %+v", err, claims)
			}
			var others []authn.PublicKey
			for _, k := range all {
				if k.JWK().Kid != s.PublicKey().JWK().Kid {
					others = append(others, k)
				}
			}
			if err := authn.Verify(token, others, &claims); err == nil {
				t.Errorf("verified without its key")
			}
			tampered := token[:len(token)-4] + "AAAA"
			if err := authn.Verify(tampered, all, &claims); err == nil {
				t.Errorf("verified a tampered signature")
			}
		})
	}
}
