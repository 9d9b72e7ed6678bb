package authn

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Signer signs and verifies JSON Web Tokens with RS256, as kube-apiserver
// signs ServiceAccount tokens (the header's kid is the SHA-256 of the
// public key, base64url-encoded).
type Signer struct {
	key *rsa.PrivateKey
	kid string
}

// NewSigner returns a Signer using key.
func NewSigner(key *rsa.PrivateKey) (*Signer, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &Signer{key: key, kid: base64.RawURLEncoding.EncodeToString(sum[:])}, nil
}

// Sign returns a signed token carrying claims.
func (s *Signer) Sign(claims any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "RS256", "kid": s.kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// ErrBadToken is returned by Verify for a token this Signer did not sign.
var ErrBadToken = errors.New("invalid token")

// Verify checks a token's signature and decodes its claims into claims.
func (s *Signer) Verify(token string, claims any) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ErrBadToken
	}
	var header struct{ Alg, Kid string }
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(b, &header) != nil || header.Alg != "RS256" || header.Kid != s.kid {
		return ErrBadToken
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return ErrBadToken
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return ErrBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, claims) != nil {
		return ErrBadToken
	}
	return nil
}
