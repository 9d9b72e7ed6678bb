package server

import (
	"net/http"

	"kubeplay/server/encoding"
)

// get reads the latest version of an object. A resourceVersion asks for one
// not older than it ("0": any), so only a revision the store has not reached
// changes the answer: 504 after a short wait, as kube-apiserver answers.
func (s *Server) get(w http.ResponseWriter, r *http.Request, req *request) {
	rev, err := parseResourceVersion(r.URL.Query().Get("resourceVersion"))
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if err := s.reg.awaitRevision(r.Context(), rev); err != nil {
		writeError(w, r, err)
		return
	}
	if s.sendsStored(r, req) {
		o, err := s.reg.getStored(r.Context(), req.res, req.namespace, req.name)
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		writeStoredObject(w, r, http.StatusOK, &o)
		return
	}
	obj, _, err := s.reg.getObject(r.Context(), req.res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, http.StatusOK, obj)
}
