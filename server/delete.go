package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/encoding"
)

// The finalizers through which the API server hands a cascading deletion to
// the garbage collector.
const (
	FinalizerOrphan     = metav1.FinalizerOrphanDependents // "orphan"
	FinalizerForeground = metav1.FinalizerDeleteDependents // "foregroundDeletion"
)

// deleteOptions reads DeleteOptions as kube-apiserver does: from the body
// when it has one (the query is then ignored), else from the query.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		mt, err := encoding.BodyMediaType(r)
		if err != nil {
			return nil, err
		}
		m, err := encoding.DecodeObject(mt, body)
		switch {
		case err != nil && mt == encoding.CBOR:
			return nil, encoding.BadRequest("unable to determine group/version/kind: %v", err)
		case err != nil && mt == encoding.Protobuf:
			return nil, encoding.BadRequest("%v", err)
		case err != nil:
			return nil, encoding.BadRequest("couldn't get version/kind; json parse error: %v", err)
		}
		if kind, _ := m["kind"].(string); kind != "" && kind != "DeleteOptions" {
			apiVersion, _ := m["apiVersion"].(string)
			return nil, encoding.BadRequest("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, apiVersion)
		}
		j, _ := json.Marshal(m)
		if err := json.Unmarshal(j, opts); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, encoding.BadRequest("json: cannot unmarshal %s into Go struct field DeleteOptions.%s of type %s", te.Value, te.Field, te.Type)
			}
			return nil, encoding.BadRequest("%v", err)
		}
		return opts, nil
	}
	q := r.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if q.Has("orphanDependents") {
		b := QueryBool(q, "orphanDependents")
		opts.OrphanDependents = &b
	}
	if q.Has("ignoreStoreReadErrorWithClusterBreakingPotential") {
		b := QueryBool(q, "ignoreStoreReadErrorWithClusterBreakingPotential")
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = &b
	}
	opts.DryRun = q["dryRun"]
	return opts, nil
}

var deleteOptionsKind = schema.GroupKind{Group: "meta.k8s.io", Kind: "DeleteOptions"}

// validateDeleteOptions answers 422 for options kube-apiserver rejects. The
// unsafe-deletion option is checked only when its feature gate is on (when
// off, the server drops the field).
func (s *registry) validateDeleteOptions(opts *metav1.DeleteOptions, collection bool) error {
	var errs field.ErrorList
	if opts.OrphanDependents != nil && opts.PropagationPolicy != nil {
		errs = append(errs, field.Invalid(field.NewPath("propagationPolicy"), *opts.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set"))
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("propagationPolicy"), *p, []string{"Foreground", "Background", "Orphan", "nil"}))
		}
	}
	for _, v := range opts.DryRun {
		if v != metav1.DryRunAll {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun"), opts.DryRun, []string{metav1.DryRunAll}))
			break
		}
	}
	if !s.enabled(AllowUnsafeMalformedObjectDeletion) {
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	}
	if unsafeDelete(opts) {
		p := field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential")
		if collection {
			errs = append(errs, field.Invalid(p, true, "is not allowed with DELETECOLLECTION, try again after removing the option"))
		}
		for _, set := range []struct {
			name string
			set  bool
		}{
			{".dryRun", len(opts.DryRun) > 0},
			{".propagationPolicy", opts.PropagationPolicy != nil},
			{".orphanDependents", opts.OrphanDependents != nil},
			{".gracePeriodSeconds", opts.GracePeriodSeconds != nil},
			{".preconditions", opts.Preconditions != nil},
		} {
			if set.set && !collection {
				errs = append(errs, field.Invalid(p, true, "cannot be set together with "+set.name))
			}
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(deleteOptionsKind, "", errs)
	}
	return nil
}

func unsafeDelete(opts *metav1.DeleteOptions) bool {
	return opts.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *opts.IgnoreStoreReadErrorWithClusterBreakingPotential
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err == nil {
		err = s.reg.validateDeleteOptions(opts, false)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	code, out, err := s.reg.delete(r.Context(), req.store, req.namespace, req.name, opts)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, code, out)
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err == nil {
		err = s.reg.validateDeleteOptions(opts, true)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	sel, err := parseSelectors(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	list, err := s.reg.deleteCollection(r.Context(), req.store, req.namespace, sel, opts)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeList(w, r, req, list)
}
