package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/encoding"
)

// continueToken is the state a paginated list resumes from; encoded as
// kube-apiserver encodes it (base64 of JSON), so clients treat it as opaque.
type continueToken struct {
	APIVersion string `json:"v"`
	// ResourceVersion is the snapshot the list reads; negative (in the
	// token of an expired continue) means the latest revision.
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueVersion = "meta.k8s.io/v1"

func encodeContinue(rev int64, nextKey string) string {
	b, _ := json.Marshal(continueToken{APIVersion: continueVersion, ResourceVersion: rev, StartKey: nextKey})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue parses a token; its errors are the real server's.
func decodeContinue(token string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	switch {
	case err != nil:
	case t.APIVersion != continueVersion:
		err = fmt.Errorf("server does not recognize this encoded version %s", t.APIVersion)
	case t.ResourceVersion == 0:
		err = fmt.Errorf("incorrect encoded start resourceVersion (version %s)", continueVersion)
	case strings.Contains(t.StartKey, ".."):
		err = fmt.Errorf("%s", t.StartKey)
	}
	if err != nil {
		return continueToken{}, encoding.BadRequest("invalid continue token: continue key is not valid: %v", err)
	}
	return t, nil
}

// errContinueExpired answers a continue token whose snapshot was compacted:
// 410 Gone, carrying a token that continues from the same key at the latest
// revision, as kube-apiserver does.
func errContinueExpired(startKey string) error {
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. " +
		"Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	err.ErrStatus.ListMeta.Continue = encodeContinue(-1, startKey)
	return err
}
