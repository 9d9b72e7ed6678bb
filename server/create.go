package server

import (
	"net/http"

	"kubeplay/server/encoding"
)

// create serves a POST of a new object.
func (s *Server) create(w http.ResponseWriter, r *http.Request, req *request) {
	wr, obj, err := s.createObject(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	// The answer is the object stored: sent as stored, it is the bytes just
	// written with the resourceVersion spliced in, not encoded a second time.
	if wr.stored.Value != nil && s.sendsStored(r, req) {
		if o, ok := canonicalStored(req.res, wr.stored); ok {
			writeStoredObject(w, r, http.StatusCreated, &o)
			return
		}
	}
	s.writeObject(w, r, req, http.StatusCreated, obj)
}

func (s *Server) createObject(r *http.Request, req *request) (*write, object, error) {
	opts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		return nil, nil, err
	}
	obj, err := readBody(r, req.res)
	if err != nil {
		return nil, nil, err
	}
	wr := &write{request: req, manager: opts.manager, dryRun: opts.dryRun}
	obj, err = s.reg.createWith(r.Context(), wr, obj)
	return wr, obj, err
}
