package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/encoding"
)

// The kubelet's subresources: kube-apiserver checks the pod, its container
// and its node, then proxies the request to the node's kubelet. kubeplay's
// nodes are simulated and run no containers, so the checks answer as
// kube-apiserver's do, and what a kubelet would answer comes from the
// simulated kubelet: a started container's log is what its simulated
// program printed (Options.ContainerLog), or a line that says it is
// simulated; there is nothing to exec into, attach to or forward to; a
// container that did not start is "waiting to start", as a real kubelet
// says. A started container reaches the simulated kubelet whether or not
// its pod names a node.

var (
	nodesResource     = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	endpointsResource = schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}
)

// podLog answers pods/log.
func (s *Server) podLog(w http.ResponseWriter, r *http.Request, req *request) {
	q := r.URL.Query()
	for _, name := range []string{"tailLines", "sinceSeconds", "limitBytes"} {
		if v := q.Get(name); v != "" {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				encoding.WriteError(w, r, encoding.BadRequest("%v", err))
				return
			}
		}
	}
	pod, container, err := s.podContainer(r.Context(), req, q.Get("container"))
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	state := containerState(pod, container)
	if nodeName(pod) == "" && state == "" {
		// kube-apiserver answers an unscheduled pod's log with nothing.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if nodeName(pod) != "" {
		if err := s.reachNode(r.Context(), nodeName(pod), notFoundAsPods); err != nil {
			encoding.WriteError(w, r, err)
			return
		}
	}
	previous := q.Get("previous") == "true"
	if previous && !restarted(pod, container) {
		encoding.WriteError(w, r, encoding.BadRequest("previous terminated container %q in pod %q not found", container, req.name))
		return
	}
	if !previous && (state == "" || state == "waiting" && !restarted(pod, container)) {
		encoding.WriteError(w, r, errWaitingToStart(pod, container))
		return
	}
	var text string
	if s.containerLog != nil {
		text = s.containerLog(pod, container, previous)
	}
	if text == "" {
		text = fmt.Sprintf("kubeplay: container %q of pod %s/%s is simulated: it runs no process, so it has written no log\n",
			container, req.namespace, req.name)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.WriteString(w, limitLog(text, q))
	}
}

// restarted reports whether a pod's container has a previous run, which
// its status reports as its last state.
func restarted(pod object, container string) bool {
	for _, list := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		for _, c := range jsonmap.List(pod, "status", list) {
			if m, _ := c.(map[string]any); str(m, "name") == container {
				return jsonmap.Child(m, "lastState", "terminated") != nil
			}
		}
	}
	return false
}

// limitLog keeps of a log what the tailLines and limitBytes of a log
// request ask for.
func limitLog(text string, q url.Values) string {
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		text = strings.Join(lines[max(len(lines)-n, 0):], "")
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n >= 0 && n < len(text) {
		text = text[:n]
	}
	return text
}

// podStream answers pods/exec, pods/attach (to a container's streams) and
// pods/portforward (to the pod's ports): WebSocket and SPDY upgrades.
func (s *Server) podStream(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	var pod object
	var container string
	var err error
	if req.subresource == "portforward" {
		pod, _, err = s.reg.getObject(ctx, s.catalog.Lookup(podsResource), req.namespace, req.name)
	} else {
		pod, container, err = s.podContainer(ctx, req, r.URL.Query().Get("container"))
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	started := podStarted(pod, container)
	switch {
	case nodeName(pod) == "" && !started:
		err = encoding.BadRequest("pod %s does not have a host assigned", req.name)
	case nodeName(pod) != "":
		err = s.reachNode(ctx, nodeName(pod), notFoundAsPods)
	}
	if err == nil && !isUpgrade(r) {
		err = encoding.BadRequest("Upgrade request required")
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if !started {
		err = errWaitingToStart(pod, container)
	} else if req.subresource == "portforward" {
		err = encoding.BadRequest("pod %s is simulated by kubeplay: no process listens on its ports, so there is nothing to forward to", req.name)
	} else {
		err = encoding.BadRequest("container %q of pod %s is simulated by kubeplay: it runs no process, so there is nothing to %s", container, req.name, req.subresource)
	}
	if req.subresource != "portforward" && answerInStream(w, r, err) {
		return
	}
	encoding.WriteError(w, r, err)
}

// podProxy answers pods/proxy: kube-apiserver proxies to the pod's address
// when it has one it may reach.
func (s *Server) podProxy(w http.ResponseWriter, r *http.Request, req *request) {
	name, port := splitProxyName(req.name)
	pod, _, err := s.reg.getObject(r.Context(), s.catalog.Lookup(podsResource), req.namespace, name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	ip := jsonmap.String(pod, "status", "podIP")
	if !globalUnicast(ip) {
		encoding.WriteError(w, r, encoding.BadRequest("address not allowed"))
		return
	}
	encoding.WriteError(w, r, errUnreachable(fmt.Sprintf("pod %s is simulated by kubeplay: nothing listens at %s", name, hostPort(ip, port))))
}

// serviceProxy answers services/proxy: kube-apiserver proxies to one of the
// addresses of the service's Endpoints.
func (s *Server) serviceProxy(w http.ResponseWriter, r *http.Request, req *request) {
	name, _ := splitProxyName(req.name)
	res := s.catalog.Lookup(endpointsResource)
	if res == nil {
		encoding.WriteError(w, r, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name))
		return
	}
	ep, _, err := s.reg.getObject(r.Context(), res, req.namespace, name)
	if apierrors.IsNotFound(err) {
		err = apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	for _, subset := range jsonmap.List(ep, "subsets") {
		if m, _ := subset.(map[string]any); len(asSlice(m["addresses"])) > 0 {
			encoding.WriteError(w, r, errUnreachable(fmt.Sprintf("service %s is simulated by kubeplay: nothing listens at its endpoints", name)))
			return
		}
	}
	encoding.WriteError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name)))
}

// nodeProxy answers nodes/proxy: kube-apiserver proxies to the node's kubelet.
func (s *Server) nodeProxy(w http.ResponseWriter, r *http.Request, req *request) {
	name, _ := splitProxyName(req.name)
	if err := s.reachNode(r.Context(), name, nil); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.WriteError(w, r, errUnreachable(fmt.Sprintf("node %s is simulated by kubeplay: no kubelet listens at its address", name)))
}

// podContainer returns the pod of req and the container a request names,
// or the only one when it names none, as kube-apiserver checks it.
func (s *Server) podContainer(ctx context.Context, req *request, container string) (object, string, error) {
	pod, _, err := s.reg.getObject(ctx, s.catalog.Lookup(podsResource), req.namespace, req.name)
	if err != nil {
		return nil, "", err
	}
	names := containerNames(pod)
	if container != "" {
		for _, n := range names {
			if n == container {
				return pod, container, nil
			}
		}
		return nil, "", encoding.BadRequest("container %s is not valid for pod %s", container, req.name)
	}
	switch containers := jsonmap.List(pod, "spec", "containers"); len(containers) {
	case 1:
		c, _ := containers[0].(map[string]any)
		return pod, str(c, "name"), nil
	case 0:
		return nil, "", encoding.BadRequest("a container name must be specified for pod %s", req.name)
	}
	return nil, "", encoding.BadRequest("a container name must be specified for pod %s, choose one of: %v", req.name, names)
}

// containerNames lists a pod's init, regular and ephemeral containers.
func containerNames(pod object) []string {
	var names []string
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range jsonmap.List(pod, "spec", list) {
			m, _ := c.(map[string]any)
			names = append(names, str(m, "name"))
		}
	}
	return names
}

// containerState is the state the pod's status reports for a container:
// "running", "terminated", "waiting", or "" when it reports none.
func containerState(pod object, container string) string {
	for _, list := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		for _, c := range jsonmap.List(pod, "status", list) {
			m, _ := c.(map[string]any)
			if str(m, "name") != container {
				continue
			}
			for _, st := range []string{"running", "terminated", "waiting"} {
				if _, ok := jsonmap.Child(m, "state")[st]; ok {
					return st
				}
			}
		}
	}
	return ""
}

// podStarted reports whether the simulated kubelet started a container of
// the pod (the named one, or any for a port forward).
func podStarted(pod object, container string) bool {
	if container != "" {
		return containerState(pod, container) == "running"
	}
	return jsonmap.String(pod, "status", "phase") == "Running"
}

func nodeName(pod object) string { return jsonmap.String(pod, "spec", "nodeName") }

// errWaitingToStart is a kubelet's answer for a container that did not
// start.
func errWaitingToStart(pod object, container string) error {
	reason := "ContainerCreating"
	for _, list := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		for _, c := range jsonmap.List(pod, "status", list) {
			if m, _ := c.(map[string]any); str(m, "name") == container {
				if r := jsonmap.String(m, "state", "waiting", "reason"); r != "" {
					reason = r
				}
			}
		}
	}
	return encoding.BadRequest("container %q in pod %q is waiting to start: %s", container, str(metadata(pod), "name"), reason)
}

// notFoundAsPods names a missing node as kube-apiserver's pod subresources
// do, as a pod.
var notFoundAsPods = &schema.GroupResource{Resource: "pods"}

// reachNode checks what kube-apiserver checks before it dials a node's
// kubelet: the node exists (its absence reported as missingAs when set)
// and has an address of a type it uses.
func (s *Server) reachNode(ctx context.Context, name string, missingAs *schema.GroupResource) error {
	node, _, err := s.reg.getObject(ctx, s.catalog.Lookup(nodesResource), "", name)
	if apierrors.IsNotFound(err) && missingAs != nil {
		return apierrors.NewNotFound(*missingAs, name)
	}
	if err != nil {
		return err
	}
	var known []string
	for _, a := range jsonmap.List(node, "status", "addresses") {
		m, _ := a.(map[string]any)
		switch str(m, "type") {
		case "Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP":
			return nil
		}
		known = append(known, "{"+str(m, "type")+" "+str(m, "address")+"}")
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: fmt.Sprintf("no preferred addresses found; known addresses: [%s]", strings.Join(known, " "))}}
}

// errUnreachable is the proxy's answer when nothing answers at the address.
func errUnreachable(why string) error {
	return apierrors.NewServiceUnavailable("error trying to reach service: " + why)
}

// splitProxyName splits a proxy path's name: "name", "name:port" or
// "scheme:name:port".
func splitProxyName(id string) (name, port string) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 2:
		return parts[0], parts[1]
	case 3:
		return parts[1], parts[2]
	}
	return id, ""
}

func hostPort(ip, port string) string {
	if port == "" {
		return ip
	}
	return ip + ":" + port
}

// isUpgrade reports whether r asks to upgrade its connection (WebSocket or
// SPDY).
func isUpgrade(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") && r.Header.Get("Upgrade") != ""
}

func globalUnicast(ip string) bool {
	parsed := net.ParseIP(ip)
	return parsed != nil && parsed.IsGlobalUnicast()
}
