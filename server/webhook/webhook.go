package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClientConfig is a webhook's clientConfig: admission webhooks' and CRD
// conversion webhooks' have the same fields.
type ClientConfig struct {
	URL      *string  `json:"url,omitempty"`
	Service  *Service `json:"service,omitempty"`
	CABundle []byte   `json:"caBundle,omitempty"`
}

// Service is a clientConfig's service reference.
type Service struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// DefaultTimeout is how long a webhook that sets no timeoutSeconds is
// waited for.
const DefaultTimeout = 10 * time.Second

// Resolver gives the address ("ip:port") that a service's port reaches: one
// of its endpoints. Its error is the call's.
type Resolver func(ctx context.Context, namespace, name string, port int32) (string, error)

// Endpoint is where a webhook is called and how its server is trusted.
type Endpoint struct {
	// URL is clientConfig.url, or for a service
	// https://<name>.<namespace>.svc:<port><path>.
	URL *url.URL
	// CABundle (PEM) verifies the server's certificate; empty: the
	// system's roots.
	CABundle []byte
	// ServerName is the name the server's certificate must hold: a
	// service's DNS name; empty, the URL's host.
	ServerName string
	// Dial, for a service, is the address its host is dialled at.
	Dial func(ctx context.Context) (string, error)
	// Unreachable, if set, is why no call is made: each fails with it.
	Unreachable error
}

// ErrCallsOff is why a server that calls no webhooks (a hosted
// playground's: its visitors must not make it send requests wherever they
// like) does not reach one.
var ErrCallsOff = errors.New("this server calls no webhooks")

// EndpointOf is where a webhook configured by cc is called, a service
// resolved by resolve when the call dials it (so that a service without
// endpoints fails the call, as kube-apiserver's does).
func EndpointOf(name string, cc ClientConfig, resolve Resolver) (Endpoint, error) {
	if svc := cc.Service; svc != nil {
		port := int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		serverName := svc.Name + "." + svc.Namespace + ".svc"
		path := "/"
		if svc.Path != nil && *svc.Path != "" {
			path = *svc.Path
		}
		u := &url.URL{Scheme: "https", Host: net.JoinHostPort(serverName, strconv.Itoa(int(port))), Path: path}
		dial := func(ctx context.Context) (string, error) { return resolve(ctx, svc.Namespace, svc.Name, port) }
		return Endpoint{URL: u, CABundle: cc.CABundle, ServerName: serverName, Dial: dial}, nil
	}
	if cc.URL == nil || *cc.URL == "" {
		return Endpoint{}, &CallError{Webhook: name, Reason: errors.New("webhook configuration must have either service or URL")}
	}
	u, err := url.Parse(*cc.URL)
	if err != nil {
		return Endpoint{}, &CallError{Webhook: name, Reason: fmt.Errorf("Unparsable URL: %v", err)}
	}
	return Endpoint{URL: u, CABundle: cc.CABundle}, nil
}

// CallError is a call that failed (unreachable, timed out, an answer that
// is not one): it fails the request or is ignored, as the webhook's
// failurePolicy says. Its message is kube-apiserver's.
type CallError struct {
	Webhook string
	Reason  error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.Webhook, e.Reason)
}

// Post sends body (JSON) to e, waiting at most timeout, and returns the
// body of its answer (an answer other than 2xx is an error). As kube-apiserver's client, it names the timeout in
// the URL's query (?timeout=10s); an answer other than 2xx is the
// StatusError it carries, or one made of its code and text.
func Post(ctx context.Context, e Endpoint, timeout time.Duration, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := *e.URL
	q := u.Query()
	q.Set("timeout", (timeout + time.Second - 1).Truncate(time.Second).String())
	u.RawQuery = q.Encode()
	if e.Unreachable != nil {
		return nil, &url.Error{Op: "Post", URL: u.String(), Err: e.Unreachable}
	}
	code, answer, err := post(ctx, e, &u, body)
	if err != nil {
		return nil, err
	}
	if code >= 200 && code < 300 {
		return answer, nil
	}
	var status metav1.Status
	if json.Unmarshal(answer, &status) == nil && status.Kind == "Status" {
		return nil, &apierrors.StatusError{ErrStatus: status}
	}
	return nil, apierrors.NewGenericServerResponse(code, http.MethodPost, schema.GroupResource{}, "", string(answer), 0, true)
}

// Versions of AdmissionReview a webhook may accept, in kube-apiserver's
// order of preference: the first of the webhook's admissionReviewVersions
// that the server knows is sent.
var reviewVersions = []string{"v1", "v1beta1"}

// ReviewVersion is the AdmissionReview version sent to a webhook that
// accepts versions.
func ReviewVersion(name string, versions []string) (string, error) {
	for _, v := range versions {
		for _, known := range reviewVersions {
			if v == known {
				return v, nil
			}
		}
	}
	return "", &CallError{Webhook: name, Reason: errors.New("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)")}
}

// Response is what admission takes from a webhook's answer.
type Response struct {
	Allowed          bool
	Result           *metav1.Status
	Patch            []byte
	AuditAnnotations map[string]string
	Warnings         []string
}

// VerifyResponse decodes a webhook's answer to the AdmissionReview of
// version and uid: an answer that is no valid response is a CallError.
// A validating webhook may not patch; a v1beta1 patch is a JSON patch.
func VerifyResponse(name, version, uid string, mutating bool, body []byte) (*Response, error) {
	invalid := func(format string, args ...any) error {
		return &CallError{Webhook: name, Reason: fmt.Errorf("received invalid webhook response: "+format, args...)}
	}
	// The fields of admission.k8s.io's AdmissionReview that admission
	// reads (its Go package would weigh on the browser engine).
	var review struct {
		metav1.TypeMeta `json:",inline"`
		Response        *struct {
			UID              string            `json:"uid"`
			Allowed          bool              `json:"allowed"`
			Result           *metav1.Status    `json:"status"`
			Patch            []byte            `json:"patch"`
			PatchType        *string           `json:"patchType"`
			AuditAnnotations map[string]string `json:"auditAnnotations"`
			Warnings         []string          `json:"warnings"`
		} `json:"response"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, &CallError{Webhook: name, Reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	r := review.Response
	if r == nil {
		return nil, invalid("webhook response was absent")
	}
	if r.UID != uid {
		return nil, invalid("expected response.uid=%q, got %q", uid, r.UID)
	}
	if version == "v1" {
		want := "admission.k8s.io/v1, Kind=AdmissionReview"
		if got := schema.FromAPIVersionAndKind(review.APIVersion, review.Kind).String(); got != want {
			return nil, invalid("expected webhook response of %v, got %v", want, got)
		}
		switch {
		case mutating && len(r.Patch) > 0 && r.PatchType == nil:
			return nil, invalid("webhook returned response.patch but not response.patchType")
		case mutating && len(r.Patch) == 0 && r.PatchType != nil:
			return nil, invalid("webhook returned response.patchType but not response.patch")
		case mutating && r.PatchType != nil && *r.PatchType != "JSONPatch":
			return nil, invalid("webhook returned invalid response.patchType of %q", *r.PatchType)
		case !mutating && len(r.Patch) > 0:
			return nil, invalid("validating webhook may not return response.patch")
		case !mutating && r.PatchType != nil:
			return nil, invalid("validating webhook may not return response.patchType")
		}
	}
	out := &Response{Allowed: r.Allowed, Result: r.Result, AuditAnnotations: r.AuditAnnotations, Warnings: r.Warnings}
	if mutating {
		out.Patch = r.Patch
	}
	return out, nil
}

// Denied is the error of a request a webhook denied, its answer's status
// made a failure, as kube-apiserver makes it.
func Denied(name string, result *metav1.Status) *apierrors.StatusError {
	status := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		status = *result
	}
	if status.Code < http.StatusBadRequest {
		status.Code = http.StatusBadRequest
	}
	if status.Status == "" || status.Status == metav1.StatusSuccess {
		status.Status = metav1.StatusFailure
	}
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case status.Message != "":
		status.Message = deniedBy + ": " + status.Message
	case status.Reason != "":
		status.Message = deniedBy + ": " + string(status.Reason)
	default:
		status.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: status}
}

// DryRunUnsupported is the error of a dry run that would call a webhook
// with side effects.
func DryRunUnsupported(name string) *apierrors.StatusError {
	return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", name))
}
