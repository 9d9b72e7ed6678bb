package server

import (
	"net/http"

	"kubeplay/server/encoding"
)

// create serves a POST of a new object.
func (s *Server) create(w http.ResponseWriter, r *http.Request, req *request) {
	obj, err := s.createObject(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, http.StatusCreated, obj)
}

func (s *Server) createObject(r *http.Request, req *request) (object, error) {
	opts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		return nil, err
	}
	obj, err := readBody(r, req.res)
	if err != nil {
		return nil, err
	}
	return s.reg.createWith(r.Context(), &write{request: req, manager: opts.manager, dryRun: opts.dryRun}, obj)
}
