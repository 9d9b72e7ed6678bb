package website

import (
	"net/http"

	"kubeplay/cli"
	"kubeplay/playground/api"
	"kubeplay/server"
	"kubeplay/web"
)

// Options is what a site serves. The zero value of each optional field
// leaves its part out, as the browser engine does.
type Options struct {
	// Sandbox is the cluster served at the root: its API, its UI and the
	// UI's console.
	Sandbox web.Sandbox
	// Playground is the playground API (package playground/api), served
	// under api.Prefix and /sandboxes/; nil: none.
	Playground http.Handler
	// Browser serves the browser-mode files (static.Handler), mounted under
	// /browser/; nil: none.
	Browser http.Handler
	// Anonymous is what requests without a token may do. The UI offers the
	// emulated release's switch, which bypasses the API's authorization,
	// only where every visitor is a cluster administrator anyway.
	Anonymous server.Anonymous
	// Hosted is true when the playground API takes only its admin's token.
	// The UI's sandboxes page, which would hand anyone the admin's powers,
	// then manages none, and there is no emulation switch.
	Hosted bool
}

// New returns the site: the playground API and the browser-mode files where
// given, the console (cli.Path), and the UI with the API at the root.
func New(o Options) http.Handler {
	mux := http.NewServeMux()
	if o.Playground != nil {
		mux.Handle(api.Prefix+"/", o.Playground)
		mux.Handle("/sandboxes/", o.Playground)
	}
	if o.Browser != nil {
		mux.Handle("/browser/", browserHeaders(http.StripPrefix("/browser", o.Browser)))
	}
	mux.Handle(cli.Path, cli.New(o.Sandbox.Handler()).Handler())
	ui := o.Sandbox
	if o.Anonymous != server.AnonymousAdmin || o.Hosted {
		// Hides the sandbox's emulation.Cluster methods from the UI.
		ui = struct{ web.Sandbox }{o.Sandbox}
	}
	if o.Hosted {
		mux.Handle("/", web.New(ui))
	} else {
		mux.Handle("/", web.NewWithPlayground(ui, o.Playground))
	}
	return mux
}

// browserHeaders sets the cache policy of the browser-mode files: their URLs
// carry no version, so browsers revalidate (cheaply, by ETag) on every load.
func browserHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}
