// Package webhook is how the engine calls the webhooks its objects name:
// admission webhooks (MutatingWebhookConfiguration,
// ValidatingWebhookConfiguration) and CRD conversion webhooks. It knows the
// wire (the clientConfig, TLS with the caBundle, the timeout, the
// AdmissionReview and its answer) and kube-apiserver's words for every way a
// call fails; which webhooks a request calls, and what becomes of their
// answers, is the server's.
//
// Natively (post.go) a webhook is called over HTTPS, as kube-apiserver calls
// it. In the browser (post_js.go) the engine cannot reach a local process
// (fetch can neither pin a caBundle nor dial a service's endpoint): every
// call fails as a call to an unreachable webhook fails, and the webhook's
// failurePolicy decides.
package webhook
