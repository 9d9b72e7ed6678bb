// Package audit carries, in a request's context, what the API server
// decided about the request for the layer that journals it: who the request
// ran as (and who sent it, when it impersonated someone), the authorizer's
// decision, and which admission stages ran, in order, and which one
// rejected it. kube-apiserver's audit events record the same facts.
package audit
