package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
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

// ServiceAccount tokens are JWTs signed by a key the server creates on the
// first TokenRequest (or the first token of a service-account-token
// Secret) and keeps in its store (outside /registry/, so no API serves it),
// so tokens stay valid across restarts of a persistent sandbox.

const (
	// serviceAccountIssuer is the tokens' iss, and their default and only
	// accepted audience, as kube-apiserver's --service-account-issuer.
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	signingKeyKey        = "/kubeplay/serviceaccount-signing-key"
	// credentialIDExtra is the user extra naming the token a request used.
	credentialIDExtra = authn.CredentialIDExtra
)

var serviceAccountsGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}

// serviceAccountTokens issues and verifies ServiceAccount tokens.
type serviceAccountTokens struct {
	s      *Server
	mu     sync.Mutex
	signer *authn.Signer // nil until loaded or created
}

var _ authn.TokenVerifier = (*serviceAccountTokens)(nil)

// signerFor returns the signing key's Signer, creating the key if create
// is set and there is none yet; nil if there is none.
func (t *serviceAccountTokens) signerFor(ctx context.Context, create bool) (*authn.Signer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.signer != nil {
		return t.signer, nil
	}
	kv, err := t.s.store.Get(ctx, signingKeyKey, 0)
	if errors.Is(err, store.ErrNotFound) {
		if !create {
			return nil, nil
		}
		kv, err = t.createKey(ctx)
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
	t.signer, err = authn.NewSigner(key)
	return t.signer, err
}

// createKey stores a new signing key, unless another process sharing the
// store did first, and returns the key stored.
func (t *serviceAccountTokens) createKey(ctx context.Context) (store.KeyValue, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return store.KeyValue{}, err
	}
	value := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	_, err = t.s.store.Create(ctx, signingKeyKey, value)
	if errors.Is(err, store.ErrExists) {
		return t.s.store.Get(ctx, signingKeyKey, 0)
	}
	return store.KeyValue{Key: signingKeyKey, Value: value}, err
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

// Verify accepts a token this server issued, for this API, not expired,
// whose ServiceAccount still exists (the same one: same uid); or the
// token of a service-account-token Secret (see verifyLegacy).
func (t *serviceAccountTokens) Verify(ctx context.Context, token string) (*authn.User, bool, error) {
	if strings.Count(token, ".") != 2 {
		return nil, false, nil
	}
	signer, err := t.signerFor(ctx, false)
	if err != nil || signer == nil {
		return nil, false, err
	}
	var raw json.RawMessage
	if signer.Verify(token, &raw) != nil {
		return nil, false, nil
	}
	var legacy legacyClaims
	if json.Unmarshal(raw, &legacy) == nil && legacy.Issuer == legacyIssuer {
		return t.verifyLegacy(ctx, token, legacy)
	}
	var c tokenClaims
	if json.Unmarshal(raw, &c) != nil {
		return nil, false, nil
	}
	now := t.s.now().Unix()
	if c.Issuer != serviceAccountIssuer || !slices.Contains(c.Audience, serviceAccountIssuer) || now >= c.Expiry || now < c.NotBefore {
		return nil, false, nil
	}
	ns, name := c.Kubernetes.Namespace, c.Kubernetes.ServiceAccount.Name
	sa, _, err := t.s.getObject(ctx, catalog.LookupBuiltin(serviceAccountsGVR), ns, name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	uid := str(metadata(sa), "uid")
	if uid != c.Kubernetes.ServiceAccount.UID {
		return nil, false, nil
	}
	return &authn.User{
		Name:   authn.ServiceAccountPrefix + ns + ":" + name,
		UID:    uid,
		Groups: authn.ServiceAccountGroups(ns),
		Extra:  map[string][]string{credentialIDExtra: {"JTI=" + c.ID}},
	}, true, nil
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
		audiences = []string{serviceAccountIssuer}
	}
	sa, _, err := s.getObject(ctx, req.res, req.namespace, req.name)
	if err != nil {
		return nil, err
	}
	signer, err := s.saTokens.signerFor(ctx, true)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	now := s.now().UTC().Truncate(time.Second)
	exp := now.Add(time.Duration(seconds) * time.Second)
	uid := str(metadata(sa), "uid")
	c := tokenClaims{Audience: audiences, Expiry: exp.Unix(), IssuedAt: now.Unix(), Issuer: serviceAccountIssuer,
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
