package server

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// ServiceAccount tokens are JWTs. Unless Options.ServiceAccountIssuer says
// otherwise, they are signed by a key the server creates on the first
// TokenRequest (or the first token of a service-account-token Secret) and
// keeps in its store (outside /registry/, so no API serves it), so tokens
// stay valid across restarts of a persistent sandbox.

const (
	// defaultIssuer is the tokens' iss, and their default and only
	// accepted audience, unless Options.ServiceAccountIssuer says
	// otherwise.
	defaultIssuer = "https://kubernetes.default.svc.cluster.local"
	signingKeyKey = "/kubeplay/serviceaccount-signing-key"
	// credentialIDExtra is the user extra naming the token a request used.
	credentialIDExtra = authn.CredentialIDExtra
)

// ServiceAccountIssuer configures the issuer of ServiceAccount tokens, as
// kube-apiserver's flags do.
type ServiceAccountIssuer struct {
	// Issuers identify the issuer (--service-account-issuer): the first is
	// the iss of the tokens the server issues; tokens of any are accepted.
	Issuers []string
	// SigningKey signs the tokens (--service-account-signing-key-file): an
	// *rsa.PrivateKey or an *ecdsa.PrivateKey.
	SigningKey crypto.Signer
	// PublicKeys verify tokens (--service-account-key-file), and are
	// published at /openid/v1/jwks.
	PublicKeys []crypto.PublicKey
	// Audiences identify the API (--api-audiences): tokens are issued for
	// them unless a TokenRequest names others, and a request's token must
	// be for one of them. Default: Issuers.
	Audiences []string
	// JWKSURI is the jwks_uri of the issuer's discovery document
	// (--service-account-jwks-uri, else https://<external address>/openid/v1/jwks).
	// The discovery documents are served when the first issuer is an https
	// URL (with no query or fragment) and JWKSURI is set.
	JWKSURI string
}

var serviceAccountsGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}

// serviceAccountTokens issues and verifies ServiceAccount tokens.
type serviceAccountTokens struct {
	s *registry
	// issuers are the accepted iss; the first is that of issued tokens.
	issuers []string
	// audiences identify the API (see ServiceAccountIssuer.Audiences).
	audiences []string
	// configured: the key is the configuration's, not the store's.
	configured bool
	mu         sync.Mutex
	signer     *authn.Signer     // nil until loaded or created
	keys       []authn.PublicKey // verify tokens; nil until signer is set, unless configured
	discovery  *issuerDiscovery  // nil: not served
}

// issuerDiscovery holds the documents of OpenID Connect discovery
// kube-apiserver serves for its ServiceAccount token issuer.
type issuerDiscovery struct {
	config, keySet []byte
}

var _ authn.TokenVerifier = (*serviceAccountTokens)(nil)

func newServiceAccountTokens(s *registry, cfg *ServiceAccountIssuer) (*serviceAccountTokens, error) {
	if cfg == nil {
		return &serviceAccountTokens{s: s, issuers: []string{defaultIssuer}, audiences: []string{defaultIssuer}}, nil
	}
	if len(cfg.Issuers) == 0 || cfg.SigningKey == nil {
		return nil, errors.New("a ServiceAccount issuer needs an issuer and a signing key")
	}
	t := &serviceAccountTokens{s: s, issuers: cfg.Issuers, audiences: cfg.Audiences, configured: true}
	if len(t.audiences) == 0 {
		t.audiences = cfg.Issuers
	}
	var err error
	if t.signer, err = authn.NewSigner(cfg.SigningKey); err != nil {
		return nil, fmt.Errorf("service account signing key: %w", err)
	}
	for _, key := range cfg.PublicKeys {
		k, err := authn.NewPublicKey(key)
		if err != nil {
			return nil, fmt.Errorf("service account key: %w", err)
		}
		t.keys = append(t.keys, k)
	}
	if t.discovery, err = newIssuerDiscovery(cfg.Issuers[0], cfg.JWKSURI, t.keys); err != nil {
		return nil, err
	}
	return t, nil
}

// newIssuerDiscovery renders the discovery documents of issuer, or returns
// nil when kube-apiserver would not serve them: an issuer that is not an
// https URL, no JWKS URI, no key.
func newIssuerDiscovery(issuer, jwksURI string, keys []authn.PublicKey) (*issuerDiscovery, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" || jwksURI == "" || len(keys) == 0 {
		return nil, nil
	}
	jwks := struct {
		Keys []authn.JWK `json:"keys"`
	}{}
	algs := map[string]bool{}
	for _, k := range keys {
		jwk := k.JWK()
		jwks.Keys = append(jwks.Keys, jwk)
		algs[jwk.Alg] = true
	}
	keySet, err := json.Marshal(jwks)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{issuer, jwksURI, []string{"id_token"}, []string{"public"}, slices.Sorted(maps.Keys(algs))})
	if err != nil {
		return nil, err
	}
	return &issuerDiscovery{config: config, keySet: keySet}, nil
}

// The paths of the issuer discovery documents, and the key set's media type.
const (
	openIDConfigPath = "/.well-known/openid-configuration"
	jwksPath         = "/openid/v1/jwks"
	jwksMediaType    = "application/jwk-set+json"
)

// serve answers a GET of one discovery document, doc, of type mediaType,
// which relying parties may cache for an hour (as kube-apiserver with
// keys from files).
func (d *issuerDiscovery) serve(w http.ResponseWriter, r *http.Request, mediaType string, doc []byte) {
	if r.Method != http.MethodGet {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	if err := encoding.NegotiateOnly(r, mediaType); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(doc)
}

// signerFor returns the signing key's Signer, creating the key if create
// is set and there is none yet; nil if there is none.
func (t *serviceAccountTokens) signerFor(ctx context.Context, create bool) (*authn.Signer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.signer != nil {
		return t.signer, nil
	}
	var newKey func() ([]byte, error)
	if create {
		newKey = newSigningKey
	}
	kv, err := t.s.ownEntry(ctx, signingKeyKey, newKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(kv.Value)
	if block == nil {
		return nil, fmt.Errorf("%s is corrupt", signingKeyKey)
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", signingKeyKey, err)
	}
	if t.signer, err = authn.NewSigner(key); err != nil {
		return nil, err
	}
	t.keys = []authn.PublicKey{t.signer.PublicKey()}
	return t.signer, nil
}

// publicKeys returns the keys that verify tokens: the configured ones, or
// the store's key's (none before it exists).
func (t *serviceAccountTokens) publicKeys(ctx context.Context) ([]authn.PublicKey, error) {
	if !t.configured {
		if _, err := t.signerFor(ctx, false); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keys, nil
}

// newSigningKey makes a new signing key, PEM-encoded.
func newSigningKey() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

type tokenClaims struct {
	Audience   []string `json:"aud"`
	Expiry     int64    `json:"exp"`
	IssuedAt   int64    `json:"iat"`
	Issuer     string   `json:"iss"`
	ID         string   `json:"jti"`
	Kubernetes struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
	NotBefore int64  `json:"nbf"`
	Subject   string `json:"sub"`
}

// legacyIssuer is the iss of the tokens of service-account-token Secrets.
const legacyIssuer = "kubernetes/serviceaccount"

// legacyClaims are those of a token kube-controller-manager's
// serviceaccount-token controller puts in a Secret: no audience, no expiry;
// valid while the Secret holds it and the ServiceAccount exists.
type legacyClaims struct {
	Issuer             string `json:"iss"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	Subject            string `json:"sub"`
}

// LegacyServiceAccountToken signs the token of the service-account-token
// Secret secretName of the ServiceAccount name (of uid uid) in namespace.
func (s *Server) LegacyServiceAccountToken(ctx context.Context, namespace, name, uid, secretName string) (string, error) {
	signer, err := s.saTokens.signerFor(ctx, true)
	if err != nil {
		return "", err
	}
	return signer.Sign(legacyClaims{Issuer: legacyIssuer, Namespace: namespace, SecretName: secretName,
		ServiceAccountName: name, ServiceAccountUID: uid, Subject: authn.ServiceAccountPrefix + namespace + ":" + name})
}

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// verifyLegacy accepts a Secret's token while the Secret still holds it and
// its ServiceAccount is the one it was issued for.
func (t *serviceAccountTokens) verifyLegacy(ctx context.Context, token string, c legacyClaims) (*authn.User, bool, error) {
	ns, name := c.Namespace, c.ServiceAccountName
	if ns == "" || name == "" || c.SecretName == "" || c.ServiceAccountUID == "" || c.Subject != authn.ServiceAccountPrefix+ns+":"+name {
		return nil, false, nil
	}
	secret, _, err := t.s.getObject(ctx, catalog.LookupBuiltin(secretsGVR), ns, c.SecretName)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	held, _ := base64.StdEncoding.DecodeString(jsonmap.String(secret, "data", "token"))
	if subtle.ConstantTimeCompare(held, []byte(token)) != 1 {
		return nil, false, nil
	}
	sa, _, err := t.s.getObject(ctx, catalog.LookupBuiltin(serviceAccountsGVR), ns, name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if str(metadata(sa), "uid") != c.ServiceAccountUID {
		return nil, false, nil
	}
	return &authn.User{Name: c.Subject, UID: c.ServiceAccountUID, Groups: authn.ServiceAccountGroups(ns)}, true, nil
}

// Verify accepts a token this server's keys signed, for one of audiences, of
// one of its issuers, not expired,
// whose ServiceAccount still exists (the same one: same uid); or the
// token of a service-account-token Secret (see verifyLegacy).
func (t *serviceAccountTokens) Verify(ctx context.Context, token string, audiences []string) (*authn.User, []string, error) {
	if strings.Count(token, ".") != 2 {
		return nil, nil, nil
	}
	keys, err := t.publicKeys(ctx)
	if err != nil || len(keys) == 0 {
		return nil, nil, err
	}
	var raw json.RawMessage
	if authn.Verify(token, keys, &raw) != nil {
		return nil, nil, nil
	}
	var legacy legacyClaims
	if json.Unmarshal(raw, &legacy) == nil && legacy.Issuer == legacyIssuer {
		// A Secret's token has no audience: it is for this API's.
		valid := authn.Intersect(audiences, t.audiences)
		if len(valid) == 0 {
			return nil, nil, nil
		}
		u, ok, err := t.verifyLegacy(ctx, token, legacy)
		if !ok {
			return nil, nil, err
		}
		return u, valid, nil
	}
	var c tokenClaims
	if json.Unmarshal(raw, &c) != nil {
		return nil, nil, nil
	}
	now := t.s.now().Unix()
	valid := authn.Intersect(audiences, c.Audience)
	if !slices.Contains(t.issuers, c.Issuer) || len(valid) == 0 || now >= c.Expiry || now < c.NotBefore {
		return nil, nil, nil
	}
	ns, name := c.Kubernetes.Namespace, c.Kubernetes.ServiceAccount.Name
	sa, _, err := t.s.getObject(ctx, catalog.LookupBuiltin(serviceAccountsGVR), ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	uid := str(metadata(sa), "uid")
	if uid != c.Kubernetes.ServiceAccount.UID {
		return nil, nil, nil
	}
	return &authn.User{
		Name:   authn.ServiceAccountPrefix + ns + ":" + name,
		UID:    uid,
		Groups: authn.ServiceAccountGroups(ns),
		Extra:  map[string][]string{credentialIDExtra: {"JTI=" + c.ID}},
	}, valid, nil
}

// tokenRequest is POST .../serviceaccounts/{name}/token: it issues a token
// for the ServiceAccount, valid for spec.expirationSeconds (default an hour).
func (s *Server) tokenRequest(w http.ResponseWriter, r *http.Request, req *request) {
	if req.verb != "create" {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	sub := req.res.Subresources[slices.IndexFunc(req.res.Subresources, func(sub catalog.Subresource) bool { return sub.Name == "token" })]
	obj, err := readBody(r, &catalog.Resource{Group: sub.Group, Version: sub.Version, Kind: sub.Kind})
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	out, err := s.issueToken(r.Context(), req, obj)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusCreated, out)
}

func (s *Server) issueToken(ctx context.Context, req *request, obj object) (object, error) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	seconds := int64(3600)
	switch v := spec["expirationSeconds"].(type) {
	case json.Number: // JSON and YAML bodies
		n, err := v.Int64()
		if err != nil {
			return nil, encoding.BadRequest("TokenRequest in version \"v1\" cannot be handled as a TokenRequest: spec.expirationSeconds: %v", err)
		}
		seconds = n
	case int64: // protobuf bodies
		seconds = v
	}
	invalid := func(msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "authentication.k8s.io", Kind: "TokenRequest"}, "",
			field.ErrorList{field.Invalid(field.NewPath("spec", "expirationSeconds"), seconds, msg)})
	}
	switch {
	case seconds < 600:
		return nil, invalid("may not specify a duration less than 10 minutes")
	case seconds > 1<<32:
		return nil, invalid("may not specify a duration larger than 2^32 seconds")
	}
	audiences := jsonmap.Strings(spec, "audiences")
	if len(audiences) == 0 {
		audiences = s.saTokens.audiences
	}
	sa, _, err := s.reg.getObject(ctx, req.res, req.namespace, req.name)
	if err != nil {
		return nil, err
	}
	signer, err := s.saTokens.signerFor(ctx, true)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	now := s.reg.now().UTC().Truncate(time.Second)
	exp := now.Add(time.Duration(seconds) * time.Second)
	uid := str(metadata(sa), "uid")
	c := tokenClaims{Audience: audiences, Expiry: exp.Unix(), IssuedAt: now.Unix(), Issuer: s.saTokens.issuers[0],
		ID: string(uuid.NewUUID()), NotBefore: now.Unix(), Subject: authn.ServiceAccountPrefix + req.namespace + ":" + req.name}
	c.Kubernetes.Namespace = req.namespace
	c.Kubernetes.ServiceAccount.Name, c.Kubernetes.ServiceAccount.UID = req.name, uid
	token, err := signer.Sign(c)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj["metadata"] = map[string]any{"name": req.name, "namespace": req.namespace, "uid": uid, "creationTimestamp": now.Format(time.RFC3339)}
	spec["audiences"], spec["expirationSeconds"] = audiences, seconds
	if _, ok := spec["boundObjectRef"]; !ok {
		spec["boundObjectRef"] = nil
	}
	obj["status"] = map[string]any{"token": token, "expirationTimestamp": exp.Format(time.RFC3339)}
	return obj, nil
}
