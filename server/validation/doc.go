// Package validation rejects the invalid built-in objects learners write
// most, with kube-apiserver v1.35's messages (recorded in
// ../testdata/scenarios/defaults-validation.json): pods without containers,
// names or images, ports out of range, controllers whose selector does not
// match their template's labels, Jobs whose pods would restart in place,
// Services without ports, and the selectors an update may not change.
//
// It checks objects after defaulting, as kube-apiserver does, and covers a
// part of kube-apiserver's validation only: an object it passes may still
// be one kube-apiserver rejects.
package validation
