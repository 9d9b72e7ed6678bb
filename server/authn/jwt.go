package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	_ "crypto/sha512" // ES384 and ES512
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Signer signs JSON Web Tokens as kube-apiserver signs ServiceAccount
// tokens: RS256 with an RSA key, ES256, ES384 or ES512 with an ECDSA key
// (by its curve); the header's kid names the public key (see PublicKey).
type Signer struct {
	key crypto.Signer
	pub PublicKey
}

// NewSigner returns a Signer using key, an *rsa.PrivateKey or an
// *ecdsa.PrivateKey.
func NewSigner(key crypto.Signer) (*Signer, error) {
	pub, err := NewPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, pub: pub}, nil
}

// PublicKey is the key that verifies the Signer's tokens.
func (s *Signer) PublicKey() PublicKey { return s.pub }

// Sign returns a signed token carrying claims.
func (s *Signer) Sign(claims any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": s.pub.alg, "kid": s.pub.kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := s.pub.digest(signed)
	var sig []byte
	switch key := s.key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, key, s.pub.hash, digest)
	case *ecdsa.PrivateKey:
		// JWS wants r and s side by side, each the curve's size (RFC 7518
		// section 3.4), not ASN.1.
		var r, ss *big.Int
		if r, ss, err = ecdsa.Sign(rand.Reader, key, digest); err == nil {
			size := curveBytes(key.Curve)
			sig = make([]byte, 2*size)
			r.FillBytes(sig[:size])
			ss.FillBytes(sig[size:])
		}
	default:
		err = fmt.Errorf("unsupported signing key type %T", s.key)
	}
	if err != nil {
		return "", err
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// PublicKey verifies the tokens one key signed.
type PublicKey struct {
	key  crypto.PublicKey
	alg  string
	hash crypto.Hash
	// kid is the SHA-256 of the key's PKIX encoding, base64url-encoded, as
	// kube-apiserver names its keys.
	kid string
}

// NewPublicKey returns the PublicKey of key, an *rsa.PublicKey or an
// *ecdsa.PublicKey on P-256, P-384 or P-521.
func NewPublicKey(key crypto.PublicKey) (PublicKey, error) {
	k := PublicKey{key: key}
	switch key := key.(type) {
	case *rsa.PublicKey:
		k.alg, k.hash = "RS256", crypto.SHA256
	case *ecdsa.PublicKey:
		switch key.Curve {
		case elliptic.P256():
			k.alg, k.hash = "ES256", crypto.SHA256
		case elliptic.P384():
			k.alg, k.hash = "ES384", crypto.SHA384
		case elliptic.P521():
			k.alg, k.hash = "ES512", crypto.SHA512
		default:
			return PublicKey{}, fmt.Errorf("unsupported ECDSA curve %s", key.Curve.Params().Name)
		}
	default:
		return PublicKey{}, fmt.Errorf("unsupported public key type %T", key)
	}
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return PublicKey{}, err
	}
	sum := sha256.Sum256(der)
	k.kid = base64.RawURLEncoding.EncodeToString(sum[:])
	return k, nil
}

func (k PublicKey) digest(signed string) []byte {
	h := k.hash.New()
	h.Write([]byte(signed))
	return h.Sum(nil)
}

// verify reports whether sig is k's signature of signed.
func (k PublicKey) verify(signed string, sig []byte) bool {
	digest := k.digest(signed)
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(key, k.hash, digest, sig) == nil
	case *ecdsa.PublicKey:
		size := curveBytes(key.Curve)
		if len(sig) != 2*size {
			return false
		}
		return ecdsa.Verify(key, digest, new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:]))
	}
	return false
}

func curveBytes(c elliptic.Curve) int { return (c.Params().BitSize + 7) / 8 }

// JWK is the key as a JSON Web Key (RFC 7517), in the form and field order
// of kube-apiserver's /openid/v1/jwks.
func (k PublicKey) JWK() JWK {
	jwk := JWK{Use: "sig", Kid: k.kid, Alg: k.alg}
	b64 := base64.RawURLEncoding.EncodeToString
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		jwk.Kty, jwk.N, jwk.E = "RSA", b64(key.N.Bytes()), b64(big.NewInt(int64(key.E)).Bytes())
	case *ecdsa.PublicKey:
		// The uncompressed point: 0x04, then X and Y, each the curve's size.
		point, _ := key.Bytes()
		size := curveBytes(key.Curve)
		jwk.Kty, jwk.Crv = "EC", key.Curve.Params().Name
		if len(point) == 1+2*size {
			jwk.X, jwk.Y = b64(point[1:1+size]), b64(point[1+size:])
		}
	}
	return jwk
}

// JWK is a public key as a JSON Web Key.
type JWK struct {
	Use string `json:"use"`
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Crv string `json:"crv,omitempty"`
	Alg string `json:"alg"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
}

// ErrBadToken is returned by Verify for a token none of its keys signed.
var ErrBadToken = errors.New("invalid token")

// Verify checks that one of keys signed token (the one its header's kid
// names, if it names one) and decodes its claims into claims.
func Verify(token string, keys []PublicKey, claims any) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ErrBadToken
	}
	var header struct{ Alg, Kid string }
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(b, &header) != nil {
		return ErrBadToken
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return ErrBadToken
	}
	signed := parts[0] + "." + parts[1]
	verified := false
	for _, k := range keys {
		if k.alg == header.Alg && (header.Kid == "" || header.Kid == k.kid) && k.verify(signed, sig) {
			verified = true
			break
		}
	}
	if !verified {
		return ErrBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, claims) != nil {
		return ErrBadToken
	}
	return nil
}
