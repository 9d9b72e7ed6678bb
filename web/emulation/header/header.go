package header

import (
	"context"
	"strconv"
)

// Path is package emulation's page, where the form is posted.
const Path = "/ui/emulation"

// Release spells release 1.minor ("1.21").
func Release(minor int) string { return "1." + strconv.Itoa(minor) }

type contextKey struct{}

// page is what a UI request's context says about the switch.
type page struct {
	version int
	back    string
}

// NewContext returns ctx for a UI request to the page at back (path and
// query) of a cluster that emulates release 1.minor: the header shows it.
func NewContext(ctx context.Context, minor int, back string) context.Context {
	return context.WithValue(ctx, contextKey{}, page{version: minor, back: back})
}

func from(ctx context.Context) (page, bool) {
	p, ok := ctx.Value(contextKey{}).(page)
	return p, ok
}
