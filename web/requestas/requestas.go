package requestas

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"kubeplay/web/internal/origin"
)

// Path is where the switch's form is posted.
const Path = "/ui/as"

// Identity is who the UI's requests run as; the zero value is the UI's own
// identity (no impersonation).
type Identity struct {
	User   string
	Groups []string
}

// String is the identity as the page header shows it: "alice (devs, qa)".
func (id Identity) String() string {
	if len(id.Groups) == 0 {
		return id.User
	}
	return id.User + " (" + strings.Join(id.Groups, ", ") + ")"
}

// Switch holds the identity the UI acts as and serves the form that
// changes it. It is safe for concurrent use.
type Switch struct {
	mu      sync.Mutex
	current Identity
}

// Current returns the identity the UI acts as.
func (s *Switch) Current() Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Identity{User: s.current.User, Groups: slices.Clone(s.current.Groups)}
}

// ServeHTTP takes a POST of the form (fields user, groups: separated by
// commas or spaces, and back: the page to return to), switches to that
// identity (an empty user, or the field stop, switches back to the UI's
// own) and answers 303 See Other to back.
func (s *Switch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !origin.ParseForm(w, r) {
		return
	}
	id := Identity{User: strings.TrimSpace(r.PostForm.Get("user"))}
	if r.PostForm.Get("stop") != "" {
		id = Identity{}
	}
	if id.User != "" {
		id.Groups = strings.FieldsFunc(r.PostForm.Get("groups"), func(c rune) bool { return c == ',' || c == ' ' })
	}
	s.mu.Lock()
	s.current = id
	s.mu.Unlock()
	http.Redirect(w, r, origin.LocalPath(r.PostForm.Get("back")), http.StatusSeeOther)
}

// page is what a UI request's context says about the switch.
type page struct {
	id   Identity
	back string
}

type pageKey struct{}

// NewContext returns ctx for a UI request to the page at back (path and
// query), acting as id.
func NewContext(ctx context.Context, id Identity, back string) context.Context {
	return context.WithValue(ctx, pageKey{}, page{id: id, back: back})
}

func from(ctx context.Context) page {
	p, _ := ctx.Value(pageKey{}).(page)
	return p
}

// From returns the identity a UI request acts as.
func From(ctx context.Context) Identity { return from(ctx).id }

// Impersonating returns api, to which a request whose context carries an
// identity (see NewContext) is sent as that identity.
func Impersonating(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := From(r.Context()); id.User != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Impersonate-User", id.User)
			r.Header.Del("Impersonate-Group")
			for _, g := range id.Groups {
				r.Header.Add("Impersonate-Group", g)
			}
		}
		api.ServeHTTP(w, r)
	})
}
