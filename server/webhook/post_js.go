//go:build js && wasm

package webhook

import (
	"context"
	"errors"
	"net/url"
)

// errUnreachable is why no call leaves the browser engine: fetch can
// neither trust a webhook's caBundle nor dial a service's endpoint.
var errUnreachable = errors.New("webhooks cannot be reached from the browser engine")

// post fails as a call to an unreachable webhook fails: "Post <url>: ...".
func post(_ context.Context, _ Endpoint, u *url.URL, _ []byte) (int, []byte, error) {
	return 0, nil, &url.Error{Op: "Post", URL: u.String(), Err: errUnreachable}
}
