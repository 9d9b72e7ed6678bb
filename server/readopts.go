package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// The resourceVersion parameters of get, list and watch, validated as
// kube-apiserver validates ListOptions: the same checks, in the same order,
// with the same messages (each recorded from a real kube-apiserver in
// reads_test.go).

const (
	matchExact        = string(metav1.ResourceVersionMatchExact)
	matchNotOlderThan = string(metav1.ResourceVersionMatchNotOlderThan)
)

// futureRevisionWait is how long a read at a revision the store has not
// reached yet waits for it before answering 504, as kube-apiserver waits for
// its watch cache to catch up.
const futureRevisionWait = 3 * time.Second

var listOptionsKind = schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}

// parseQuery checks the query of a list or a watch in kube-apiserver's
// order (integers, selector syntax, the resourceVersionMatch rules, the
// fields the type can select on), so that a query with several faults gets
// the same answer, and returns its selectors.
func parseQuery(r *http.Request, res *catalog.Resource, watch, watchList bool) (selectors, error) {
	q := r.URL.Query()
	for _, p := range []string{"timeoutSeconds", "limit"} {
		if v := q.Get(p); v != "" {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return selectors{}, encoding.BadRequest("%v", err)
			}
		}
	}
	sel, err := parseSelectorSyntax(r)
	if err != nil {
		return sel, err
	}
	if err := validateListOptions(r, watch, watchList); err != nil {
		return sel, err
	}
	return sel, sel.supported(res)
}

// validateListOptions checks the combinations of resourceVersion,
// resourceVersionMatch, continue and sendInitialEvents of a list or a watch
// (sendInitialEvents only with the WatchList feature gate on); the answer
// is 422 Invalid naming each broken rule.
func validateListOptions(r *http.Request, watch, watchList bool) error {
	q := r.URL.Query()
	rv, match, cont := q.Get("resourceVersion"), q.Get("resourceVersionMatch"), q.Get("continue")
	_, initial := q["sendInitialEvents"]
	p := field.NewPath("resourceVersionMatch")
	var errs field.ErrorList
	if watch {
		if initial && match != matchNotOlderThan {
			errs = append(errs, field.Forbidden(p, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		} else if !initial && match != "" {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != "" && match != matchNotOlderThan {
			errs = append(errs, field.NotSupported(p, match, []string{matchNotOlderThan}))
		}
		if initial && !watchList {
			errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
		}
	} else {
		if match != "" && rv == "" {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if match != "" && cont != "" {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if match == matchExact && rv == "0" {
			errs = append(errs, field.Forbidden(p, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
		if match != "" && match != matchExact && match != matchNotOlderThan {
			errs = append(errs, field.NotSupported(p, match, []string{matchExact, matchNotOlderThan, ""}))
		}
		if initial {
			errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	return nil
}

// parseResourceVersion parses a resourceVersion parameter ("" and "0" are 0).
// kube-apiserver answers a malformed one on get and watch with a 500 that
// carries this message; kubeplay answers 400, as it does for list.
func parseResourceVersion(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(field.Invalid(field.NewPath("resourceVersion"), v, err.Error()).Error())
	}
	if n > math.MaxInt64 {
		n = math.MaxInt64 // beyond any revision: a future one
	}
	return int64(n), nil
}

// awaitRevision waits up to futureRevisionWait for the store to reach rev;
// a revision still in the future is 504 "Too large resource version".
func (s *registry) awaitRevision(ctx context.Context, rev int64) error {
	if s.currentRevision(ctx) >= rev {
		return nil // the common case, without timers
	}
	ctx, cancel := context.WithTimeout(ctx, futureRevisionWait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		cur, err := s.store.CurrentRevision(ctx)
		if err == nil && cur >= rev {
			return nil
		}
		select {
		case <-ctx.Done():
			return errTooLargeResourceVersion(rev, s.currentRevision(context.WithoutCancel(ctx)))
		case <-tick.C:
		}
	}
}

// errTooLargeResourceVersion is kube-apiserver's answer to a read at a
// revision its watch cache has not reached after waiting.
func errTooLargeResourceVersion(asked, current int64) error {
	err := apierrors.NewTimeoutError("Too large resource version: "+strconv.FormatInt(asked, 10)+", current: "+strconv.FormatInt(current, 10), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

// errListTooOld is the answer to an exact list below the compaction horizon.
func errListTooOld() error {
	return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
}

// writeError sends err as a Status, with the Retry-After header the real
// server adds when the Status suggests a retry.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if st := encoding.StatusOf(err); st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	encoding.WriteError(w, r, err)
}
