package watch

import (
	"strings"

	"kubeplay/web/internal/linediff"
)

// DiffLine is one line of a diff: Op is ' ', '-' or '+'.
type DiffLine = linediff.Line

// diffLines is a line diff of a and b, keeping context lines of unchanged
// text around each change; a run of unchanged lines left out after a shown
// one is one "…".
func diffLines(a, b string, context int) []DiffLine {
	all := linediff.Diff(strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n"))
	keep := linediff.Near(all, context)
	var out []DiffLine
	for k, l := range all {
		if keep[k] {
			out = append(out, l)
		} else if k > 0 && keep[k-1] {
			out = append(out, DiffLine{Op: ' ', Text: "…"})
		}
	}
	return out
}
