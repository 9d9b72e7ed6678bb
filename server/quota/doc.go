// Package quota is what ResourceQuota admission and the ResourceQuota
// controller share: what an object uses of a quota (an evaluator per
// resource: pods, services, claims, and object counts for the others),
// which quotas apply to it by their resources and scopes, and the
// admission's decision on a write, with kube-apiserver's messages.
package quota
