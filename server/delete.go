package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// deleteOptions reads DeleteOptions from the body or the query.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		mt, err := encoding.BodyMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			return nil, err
		}
		m, err := encoding.DecodeObject(mt, body)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		j, _ := json.Marshal(m)
		if err := json.Unmarshal(j, opts); err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
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
	if v := q["dryRun"]; len(v) > 0 {
		opts.DryRun = v
	}
	for _, v := range opts.DryRun {
		if v != "All" {
			return nil, encoding.BadRequest("Invalid dry run: %q, only \"All\" is supported", v)
		}
	}
	return opts, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	code, out, err := s.deleteObject(r.Context(), req.res, req.namespace, req.name, opts)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, code, out)
}

// deleteObject deletes one object. An object with finalizers is only marked
// (deletionTimestamp set) and returned; otherwise it is removed and a
// Success Status returned, as kube-apiserver does.
func (s *Server) deleteObject(ctx context.Context, res *catalog.Resource, ns, name string, opts *metav1.DeleteOptions) (int, any, error) {
	obj, kv, err := s.getObject(ctx, res, ns, name)
	if err != nil {
		return 0, nil, err
	}
	md := metadata(obj)
	if pre := opts.Preconditions; pre != nil {
		if pre.UID != nil && string(*pre.UID) != str(md, "uid") {
			return 0, nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, str(md, "uid")))
		}
		if pre.ResourceVersion != nil && *pre.ResourceVersion != str(md, "resourceVersion") {
			return 0, nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, str(md, "resourceVersion")))
		}
	}
	isDryRun := len(opts.DryRun) > 0
	if res.Group == "" && res.Resource == "namespaces" {
		if st, ok := obj["status"].(map[string]any); ok {
			st["phase"] = "Terminating"
		}
	}
	if hasFinalizers(res, obj) {
		if !deleting(obj) {
			md["deletionTimestamp"] = s.now().UTC().Format("2006-01-02T15:04:05Z")
			md["deletionGracePeriodSeconds"] = int64(0)
		}
		out, err := s.commitUpdate(ctx, res, ns, name, obj, kv.ModRevision, isDryRun)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, out, nil
	}
	if !isDryRun {
		if _, _, err := s.store.Delete(ctx, objectKey(res, ns, name), kv.ModRevision); err != nil {
			return 0, nil, storeError(res, name, err)
		}
	}
	if res.Group == "" && res.Resource == "namespaces" {
		return http.StatusOK, obj, nil
	}
	return http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: name, Group: res.Group, Kind: res.Resource, UID: typesUID(str(md, "uid")),
		},
	}, nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	sel, err := parseSelectors(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	list, err := s.listObjects(r.Context(), req.res, req.namespace, sel, listOptions{})
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	deleted := []object{}
	for _, item := range list.items {
		md := metadata(item)
		_, _, err := s.deleteObject(r.Context(), req.res, str(md, "namespace"), str(md, "name"), opts)
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile
		}
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		deleted = append(deleted, item)
	}
	list.items = deleted
	s.writeList(w, r, req, list)
}
