package server

import (
	"net/http"

	"kubeplay/server/encoding"
)

func (s *Server) get(w http.ResponseWriter, r *http.Request, req *request) {
	conv, err := s.newConverter(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	obj, _, err := s.getObject(r.Context(), req.res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, conv.object(obj))
}
