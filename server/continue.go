package server

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"kubeplay/server/encoding"
)

// continueToken is the state a paginated list resumes from; encoded as
// kube-apiserver encodes it (base64 of JSON), so clients treat it as opaque.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func encodeContinue(rev int64, nextKey string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: nextKey})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(token string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.APIVersion != "meta.k8s.io/v1" || t.ResourceVersion <= 0 || strings.Contains(t.StartKey, "..") {
		return continueToken{}, encoding.BadRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	return t, nil
}
