package authn

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Authenticator decides who a request comes from.
type Authenticator struct {
	tokens map[string]User
	// anonymous allows requests without credentials, as system:anonymous.
	anonymous bool
	// anonymousGroups are added to the anonymous user's groups.
	anonymousGroups []string
	verifier        TokenVerifier
	clientCAs       *x509.CertPool
	audiences       []string
}

// TokenVerifier authenticates the bearer tokens the static list does not
// hold (ServiceAccount tokens).
type TokenVerifier interface {
	// Verify returns the user of token if it is valid for one of
	// audiences, and those of audiences it is valid for; u is nil for a
	// token it does not accept, err a failure to decide.
	Verify(ctx context.Context, token string, audiences []string) (u *User, valid []string, err error)
}

// Options configure an Authenticator.
type Options struct {
	// Tokens maps bearer tokens to their users (see ParseTokenFile).
	Tokens map[string]User
	// DenyAnonymous rejects requests without credentials with 401 instead of
	// running them as system:anonymous.
	DenyAnonymous bool
	// AnonymousGroups are extra groups of the anonymous user: the local
	// sandbox puts it in system:masters, so kubectl works with no
	// kubeconfig while RBAC still decides for every other user.
	AnonymousGroups []string
	// Verifier, if set, authenticates tokens not in Tokens.
	Verifier TokenVerifier
	// ClientCAs, if set, authenticate TLS client certificates they signed:
	// the user is the certificate's common name, its groups its
	// organizations.
	ClientCAs *x509.CertPool
	// Audiences identify this API (kube-apiserver's --api-audiences): a
	// request's bearer token must be valid for one of them. The static
	// tokens are valid for all.
	Audiences []string
}

// New returns an Authenticator configured by opts.
func New(opts Options) *Authenticator {
	return &Authenticator{tokens: opts.Tokens, anonymous: !opts.DenyAnonymous, anonymousGroups: opts.AnonymousGroups, verifier: opts.Verifier, clientCAs: opts.ClientCAs, audiences: opts.Audiences}
}

// ErrUnauthorized is returned for a request whose credentials are invalid,
// or that has none when anonymous requests are not allowed.
var ErrUnauthorized = errors.New("Unauthorized")

// Authenticate returns the user a request comes from: the user of its TLS
// client certificate, else that of its bearer token (plus
// system:authenticated), or system:anonymous (in system:unauthenticated)
// when it carries neither and anonymous requests are allowed. Credentials
// that are not valid are ErrUnauthorized, even when anonymous requests are
// allowed, unless other credentials of the request are: kube-apiserver
// tries its authenticators in turn, client certificates first.
func (a *Authenticator) Authenticate(r *http.Request) (*User, error) {
	var certErr error
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && a.clientCAs != nil {
		u, ok, err := a.certificateUser(r.TLS.PeerCertificates)
		if ok {
			return u, nil
		}
		certErr = err
	}
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "bearer") || token == "" {
		// kube-apiserver ignores other schemes (a request with only Basic
		// credentials is anonymous when no authenticator takes it).
		if certErr != nil {
			return nil, ErrUnauthorized
		}
		return a.anonymousUser()
	}
	u, _, err := a.Token(r.Context(), token, nil)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, ErrUnauthorized
	}
	return u, nil
}

// Token returns the user of a bearer token (in system:authenticated) if it
// is valid for one of audiences (nil: this API's), and those of audiences
// it is valid for, as a TokenReview reports them; nil if it is not.
func (a *Authenticator) Token(ctx context.Context, token string, audiences []string) (*User, []string, error) {
	if audiences == nil {
		audiences = a.audiences
	}
	if u, ok := a.tokens[token]; ok {
		// As kube-apiserver's audience-agnostic authenticators: valid for
		// this API, whichever of its audiences is asked for.
		valid := Intersect(audiences, a.audiences)
		if len(valid) == 0 && len(a.audiences) > 0 {
			return nil, nil, nil
		}
		return WithAuthenticatedGroup(&u), valid, nil
	}
	if a.verifier == nil {
		return nil, nil, nil
	}
	u, valid, err := a.verifier.Verify(ctx, token, audiences)
	if err != nil || u == nil {
		return nil, nil, err
	}
	return WithAuthenticatedGroup(u), valid, nil
}

// Intersect returns those of requested that are in audiences, in
// requested's order, as kube-apiserver intersects a token's audiences with
// those asked for.
func Intersect(requested, audiences []string) []string {
	var valid []string
	for _, aud := range requested {
		if slices.Contains(audiences, aud) {
			valid = append(valid, aud)
		}
	}
	return valid
}

// CredentialIDExtra is the user extra naming the credential a request was
// authenticated with.
const CredentialIDExtra = "authentication.kubernetes.io/credential-id"

// uidAttribute is the subject attribute of a client certificate that holds
// the user's uid (LDAP's UID, RFC 4519), which kube-apiserver reads with the
// AllowParsingUserUIDFromCertAuth feature, on by default since 1.33.
var uidAttribute = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}

// certificateUser authenticates a client certificate chain as
// kube-apiserver does: the user is its common name, with its organizations
// as groups, its subject's UID attribute as uid, and the certificate's
// SHA-256 as credential id. A chain that does not verify is an error; a
// certificate without a common name is no one (false) and leaves the
// request to the other credentials.
func (a *Authenticator) certificateUser(chain []*x509.Certificate) (*User, bool, error) {
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	leaf := chain[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.clientCAs, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, false, err
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, nil
	}
	var uids []string
	for _, name := range leaf.Subject.Names {
		if name.Type.Equal(uidAttribute) {
			uid, ok := name.Value.(string)
			if !ok || uid == "" {
				return nil, false, errors.New("x509: the certificate's UID is not a string")
			}
			uids = append(uids, uid)
		}
	}
	if len(uids) > 1 {
		return nil, false, errors.New("x509: the certificate has more than one UID")
	}
	sum := sha256.Sum256(leaf.Raw)
	u := &User{Name: leaf.Subject.CommonName, Groups: leaf.Subject.Organization,
		Extra: map[string][]string{CredentialIDExtra: {"X509SHA256=" + hex.EncodeToString(sum[:])}}}
	if len(uids) == 1 {
		u.UID = uids[0]
	}
	return WithAuthenticatedGroup(u), true, nil
}

func (a *Authenticator) anonymousUser() (*User, error) {
	if !a.anonymous {
		return nil, ErrUnauthorized
	}
	return &User{Name: Anonymous, Groups: append([]string{Unauthenticated}, a.anonymousGroups...)}, nil
}

// WithAuthenticatedGroup returns a copy of u in system:authenticated, which
// every authenticated user (but system:anonymous) belongs to.
func WithAuthenticatedGroup(u *User) *User {
	c := *u
	c.Groups = append([]string(nil), u.Groups...)
	if u.Name != Anonymous && !c.InGroup(Authenticated) {
		c.Groups = append(c.Groups, Authenticated)
	}
	return &c
}

// ParseTokenFile reads a static token list in kube-apiserver's
// --token-auth-file format: one line per token,
// token,user,uid[,"group1,group2,..."]; lines starting with # are comments.
func ParseTokenFile(r io.Reader) (map[string]User, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	tokens := map[string]User{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return tokens, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file: line %d: want token,user,uid[,groups], got %d fields", line, len(rec))
		}
		if rec[0] == "" {
			return nil, fmt.Errorf("token file: line %d: empty token", line)
		}
		if _, dup := tokens[rec[0]]; dup {
			return nil, fmt.Errorf("token file: line %d: duplicate token", line)
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		tokens[rec[0]] = u
	}
}
