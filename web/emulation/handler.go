package emulation

import (
	"errors"
	"maps"
	"net/http"
	"strconv"

	"kubeplay/server"
	"kubeplay/server/releases"
	"kubeplay/web/emulation/header"
	"kubeplay/web/internal/origin"
	"kubeplay/web/layout"
)

// Path is where the page is served and its forms are posted.
const Path = header.Path

// Cluster is a cluster whose emulated release can be switched at once
// (playground.Sandbox is one).
type Cluster interface {
	// Version returns the minor version of the release emulated.
	Version() int
	// SetVersion emulates release 1.minor from now on; the error is the
	// store's.
	SetVersion(minor int) error
	// FeatureGates returns the gates kubeplay follows that the emulated
	// release has, and whether each is on.
	FeatureGates() map[string]bool
	// SwitchedFeatureGates returns the gates switched on or off rather
	// than left at the release's default.
	SwitchedFeatureGates() server.FeatureGates
	// SetFeatureGates switches the gates at once: those fg lacks take the
	// release's defaults; the error is the store's.
	SetFeatureGates(fg server.FeatureGates) error
}

// Handler serves the page and the forms of a cluster.
type Handler struct {
	c Cluster
}

// New returns the handler of c's switch.
func New(c Cluster) *Handler { return &Handler{c: c} }

// ServeHTTP shows the page (GET, HEAD) or switches as a posted form says
// (POST): field version ("1.21"), and the gates with a field of their own
// ("true", "false", or "" for the release's default; a gate without a
// field stays as it is); then it answers 303 See Other to back. A version
// kubeplay does not emulate, or a gate value not a boolean, is a 400 that
// says so.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		layout.Write(w, r, http.StatusOK, Page(PropsOf(h.c)))
	case http.MethodPost:
		if !origin.ParseForm(w, r) {
			return
		}
		minor, gates, err := parseForm(r, h.c.SwitchedFeatureGates())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := errors.Join(h.c.SetVersion(minor), h.c.SetFeatureGates(gates)); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, origin.LocalPath(r.PostForm.Get("back")), http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// parseForm reads the release and the gates a posted form switches to,
// over those switched: the page lists only the gates of the release shown,
// and the header none.
func parseForm(r *http.Request, switched server.FeatureGates) (int, server.FeatureGates, error) {
	minor, err := releases.Parse(r.PostForm.Get("version"))
	if err != nil {
		return 0, nil, err
	}
	gates := maps.Clone(switched)
	if gates == nil {
		gates = server.FeatureGates{}
	}
	for _, g := range gateDocs {
		if _, posted := r.PostForm[g.name]; !posted {
			continue
		}
		v := r.PostForm.Get(g.name)
		if v == "" {
			delete(gates, g.name)
			continue
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return 0, nil, err
		}
		gates[g.name] = on
	}
	return minor, gates, nil
}

// gateDocs are the gates kubeplay follows, in the order the page lists
// them, and what each does here.
var gateDocs = []struct{ name, doc string }{
	{server.WatchList, "watches with sendInitialEvents=true: a list streamed as watch events, ended by a bookmark"},
	{server.AllowUnsafeMalformedObjectDeletion, "DELETE with ignoreStoreReadErrorWithClusterBreakingPotential removes an object that cannot be decoded"},
	{server.CBORServingAndStorage, "CBOR bodies; kubeplay does not speak CBOR yet, so this gate changes nothing"},
	{server.PodTopologyLabelsAdmission, "the PodTopologyLabels admission plugin: a pod created on a node, or bound to one, gets the node's topology.kubernetes.io zone and region labels"},
}

// PropsOf returns what the page and the header show of c.
func PropsOf(c Cluster) Props {
	p := Props{Version: c.Version()}
	on, switched := c.FeatureGates(), c.SwitchedFeatureGates()
	for _, g := range gateDocs {
		state, ok := on[g.name]
		if !ok {
			p.Missing = append(p.Missing, g.name)
			continue
		}
		gp := GateProps{Name: g.name, Doc: g.doc, On: state}
		if v, ok := switched[g.name]; ok {
			gp.Switched = strconv.FormatBool(v)
		}
		p.Gates = append(p.Gates, gp)
	}
	return p
}
