package playground

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

var serviceAccountTokenDef = controllerDef{name: "serviceAccountToken", title: "serviceaccount-token controller", actsAs: informersUser,
	start: func(sb *Sandbox) reconciler {
		return &tokensController{c: inproc.New(sb.handler, rootAgent("tokens-controller")), api: sb.api}
	}}

const (
	serviceAccountTokenType = "kubernetes.io/service-account-token"
	serviceAccountNameKey   = "kubernetes.io/service-account.name"
	serviceAccountUIDKey    = "kubernetes.io/service-account.uid"
)

var (
	secretsKeyPrefix         = builtinKeyPrefix(coreV1("secrets"))
	serviceAccountsKeyPrefix = builtinKeyPrefix(coreV1("serviceaccounts"))
)

// tokensController is kube-controller-manager's serviceaccount-token
// controller: a Secret of type kubernetes.io/service-account-token that
// names a ServiceAccount (annotation kubernetes.io/service-account.name)
// gets a token for it that the API accepts, the cluster's CA and the
// namespace; it is deleted when its ServiceAccount goes (or never was).
// Its keys are "<namespace>/<name>" of such Secrets.
type tokensController struct {
	c   *inproc.Client
	api *server.Server

	mu sync.Mutex
	// tokens holds the names of the token Secrets of each ServiceAccount,
	// by "<namespace>/<name>", as the store's changes tell.
	tokens map[string]map[string]bool
}

// tokenSecret is what the controller reads of a Secret.
type tokenSecret struct {
	Type     string `json:"type"`
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func (tc *tokensController) resync(ctx context.Context, _ int64) ([]string, error) {
	secrets, err := list(authn.WithUser(ctx, informersUser), tc.c, "/api/v1/secrets?fieldSelector=type%3D"+strings.ReplaceAll(serviceAccountTokenType, "/", "%2F"))
	if err != nil {
		return nil, err
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.tokens = map[string]map[string]bool{}
	var keys []string
	for _, s := range secrets {
		ns, name := jsonmap.String(s, "metadata", "namespace"), jsonmap.String(s, "metadata", "name")
		if sa := jsonmap.String(s, "metadata", "annotations", serviceAccountNameKey); sa != "" {
			tc.remember(ns+"/"+sa, name, true)
		}
		keys = append(keys, ns+"/"+name)
	}
	return keys, nil
}

func (tc *tokensController) remember(sa, secret string, held bool) {
	names := tc.tokens[sa]
	if names == nil {
		names = map[string]bool{}
		tc.tokens[sa] = names
	}
	if held {
		names[secret] = true
	} else if delete(names, secret); len(names) == 0 {
		delete(tc.tokens, sa)
	}
}

// keysOf names a token Secret when it changes, and the token Secrets of a
// ServiceAccount when it goes.
func (tc *tokensController) keysOf(ev store.Event, q queue) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if rest, ok := strings.CutPrefix(ev.KV.Key, serviceAccountsKeyPrefix); ok {
		if ev.Type == store.Deleted {
			ns, _, _ := strings.Cut(rest, "/")
			for name := range tc.tokens[rest] {
				q.Add(ns + "/" + name)
			}
		}
		return
	}
	rest, ok := strings.CutPrefix(ev.KV.Key, secretsKeyPrefix)
	if !ok {
		return
	}
	value := ev.KV.Value
	if ev.Type == store.Deleted && ev.Prev != nil {
		value = ev.Prev.Value
	}
	var s tokenSecret
	if json.Unmarshal(value, &s) != nil || s.Type != serviceAccountTokenType {
		return
	}
	if sa := s.Metadata.Annotations[serviceAccountNameKey]; sa != "" {
		tc.remember(s.Metadata.Namespace+"/"+sa, s.Metadata.Name, ev.Type != store.Deleted)
	}
	if ev.Type != store.Deleted {
		q.Add(rest)
	}
}

func (tc *tokensController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	path := namedPath("", "secrets", ns, name)
	secret, err := get(ctx, tc.c, path)
	if err != nil || secret == nil || jsonmap.String(secret, "type") != serviceAccountTokenType {
		return 0, err
	}
	annotations := jsonmap.Child(secret, "metadata", "annotations")
	saName, _ := annotations[serviceAccountNameKey].(string)
	wantUID, _ := annotations[serviceAccountUIDKey].(string)
	sa, err := get(ctx, tc.c, namedPath("", "serviceaccounts", ns, saName))
	if err != nil {
		return 0, err
	}
	if sa == nil || wantUID != "" && wantUID != jsonmap.String(sa, "metadata", "uid") {
		// Only this Secret: another of the same name made since is not.
		precondition := map[string]any{"preconditions": map[string]any{"uid": jsonmap.String(secret, "metadata", "uid")}}
		err := tc.c.Do(ctx, "DELETE", path, precondition, nil)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return 0, nil
		}
		return 0, err
	}
	ca, err := tc.api.ClusterCA(ctx)
	if err != nil {
		return 0, err
	}
	data := jsonmap.Child(secret, "data")
	if data == nil {
		data = jsonmap.Object{}
		secret["data"] = data
	}
	decoded := func(k string) string {
		s, _ := data[k].(string)
		b, _ := base64.StdEncoding.DecodeString(s)
		return string(b)
	}
	needsCA, needsNamespace, needsToken := decoded("ca.crt") != string(ca.CertPEM), decoded("namespace") != ns, decoded("token") == ""
	if !needsCA && !needsNamespace && !needsToken {
		return 0, nil
	}
	if needsCA {
		data["ca.crt"] = base64.StdEncoding.EncodeToString(ca.CertPEM)
	}
	if needsNamespace {
		data["namespace"] = base64.StdEncoding.EncodeToString([]byte(ns))
	}
	saUID := jsonmap.String(sa, "metadata", "uid")
	if needsToken {
		token, err := tc.api.LegacyServiceAccountToken(ctx, ns, saName, saUID, name)
		if err != nil {
			return 0, err
		}
		data["token"] = base64.StdEncoding.EncodeToString([]byte(token))
	}
	if annotations == nil {
		annotations = jsonmap.Object{}
		meta(secret)["annotations"] = annotations
	}
	annotations[serviceAccountNameKey], annotations[serviceAccountUIDKey] = saName, saUID
	secret["apiVersion"], secret["kind"] = "v1", "Secret"
	// A conflict is a newer change, which names the Secret again.
	err = tc.c.Do(ctx, "PUT", path, secret, nil)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}
