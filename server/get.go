package server

import (
	"net/http"

	"kubeplay/server/encoding"
)

func (s *Server) get(w http.ResponseWriter, r *http.Request, req *request) {
	obj, _, err := s.getObject(r.Context(), req.res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, http.StatusOK, obj)
}
