package releases

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Resource is one resource of one group version, and the releases that
// had it.
type Resource struct {
	Group, Version, Resource, Kind string
	Namespaced                     bool
	Verbs, Subresources            []string
	// Exists has bit m set if release 1.m has the resource (served by
	// default or after --runtime-config switches it on); Default if it
	// serves it by default.
	Exists, Default uint64
	// Deprecated and Removed are the minor versions of the releases that
	// deprecated the kind and stopped serving it (0 for GA kinds);
	// Replacement is what to use instead ("apps/v1 Deployment"), if anything.
	Deprecated, Removed int
	Replacement         string
}

// In reports whether release 1.minor has r.
func (r *Resource) In(minor int) bool { return minor >= 0 && minor < 64 && r.Exists&(1<<minor) != 0 }

// DefaultIn reports whether release 1.minor serves r by default.
func (r *Resource) DefaultIn(minor int) bool {
	return minor >= 0 && minor < 64 && r.Default&(1<<minor) != 0
}

// firstWarning is the first release whose API server warns of deprecated
// APIs (the Warning header came in v1.19).
const firstWarning = 19

// Warning is the deprecation warning release 1.minor adds to every request
// to r, as kube-apiserver words it, or "" when r is not deprecated there.
func (r *Resource) Warning(minor int) string {
	if r.Deprecated == 0 || minor < r.Deprecated || minor < firstWarning {
		return ""
	}
	gv := r.Version
	if r.Group != "" {
		gv = r.Group + "/" + r.Version
	}
	w := fmt.Sprintf("%s %s is deprecated in v1.%d+, unavailable in v1.%d+", gv, r.Kind, r.Deprecated, r.Removed)
	if r.Replacement != "" {
		w += "; use " + r.Replacement
	}
	return w
}

// Lookup returns the resource of a group version, or nil if no release
// from Oldest to Newest had it.
func Lookup(group, version, resource string) *Resource {
	return index()[[3]string{group, version, resource}]
}

// index holds the table by group, version and resource, built once.
var index = sync.OnceValue(func() map[[3]string]*Resource {
	m := make(map[[3]string]*Resource, len(table))
	for i := range table {
		r := &table[i]
		m[[3]string{r.Group, r.Version, r.Resource}] = r
	}
	return m
})

// All returns every resource of the table, sorted by group, version and
// resource; the caller must not modify them.
func All() []Resource { return table }

// GitVersion is the version of the last patch of release 1.minor ("v1.21.14").
func GitVersion(minor int) string { return fmt.Sprintf("v1.%d.%d", minor, patches[minor]) }

// Parse parses a Kubernetes version ("1.21", "v1.21", "1.21.14") into its
// minor version, which must be between Oldest and Newest.
func Parse(s string) (int, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "1" {
		return 0, fmt.Errorf("invalid Kubernetes version %q: want 1.MINOR", s)
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil || minor < Oldest || minor > Newest {
		return 0, fmt.Errorf("unsupported Kubernetes version %q: kubeplay emulates 1.%d to 1.%d", s, Oldest, Newest)
	}
	return minor, nil
}
