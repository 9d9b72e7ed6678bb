package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/encoding"
)

// componentStatuses answers the deprecated v1 componentstatuses, list and
// get. kube-apiserver reports the health of the scheduler, the controller
// manager and its etcd servers; kubeplay has none of them (its controllers,
// simulated, are the playground's), so it reports the one component it
// depends on, its store, as read right now.
func (s *Server) componentStatuses(w http.ResponseWriter, r *http.Request, req *request) {
	// The type is deprecated (not its resource in a release): kube-apiserver
	// warns on every request.
	w.Header().Add("Warning", `299 - "v1 ComponentStatus is deprecated in v1.19+"`)
	status := map[string]any{"type": "Healthy", "status": "True", "message": "ok"}
	if err := s.reg.storeHealth(r.Context()); err != nil {
		status = map[string]any{"type": "Healthy", "status": "False", "message": "", "error": err.Error()}
	}
	store := object{"apiVersion": "v1", "kind": "ComponentStatus", "metadata": map[string]any{"name": "store"},
		"conditions": []any{status}}
	switch {
	case req.verb == "list":
		s.writeList(w, r, req, &objectList{items: []object{store}})
	case req.name == "store":
		s.writeObject(w, r, req, http.StatusOK, store)
	default:
		encoding.WriteError(w, r, apierrors.NewNotFound(schema.GroupResource{Resource: "componentstatus"}, req.name))
	}
}
