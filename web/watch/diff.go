package watch

import (
	"slices"
	"strings"
)

// maxDiffCells bounds the work of one diff (changed lines × changed lines);
// beyond it the diff shows the old version removed and the new one added.
const maxDiffCells = 1_000_000

// DiffLine is one line of a diff: Op is ' ', '-' or '+'.
type DiffLine struct {
	Op   byte
	Text string
}

// diffLines is a line diff of a and b (longest common subsequence), keeping
// context lines of unchanged text around each change.
func diffLines(a, b string, context int) []DiffLine {
	x, y := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	// Lines common to both ends need no search: changes are usually small.
	var all, tail []DiffLine
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		all = append(all, DiffLine{' ', x[0]})
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		tail = append(tail, DiffLine{' ', x[len(x)-1]})
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	slices.Reverse(tail)
	all = append(all, middle(x, y)...)
	all = append(all, tail...)
	// Keep changes and their context.
	keep := make([]bool, len(all))
	for k, l := range all {
		if l.Op != ' ' {
			for c := max(0, k-context); c <= min(len(all)-1, k+context); c++ {
				keep[c] = true
			}
		}
	}
	var out []DiffLine
	for k, l := range all {
		if keep[k] {
			out = append(out, l)
		} else if k > 0 && keep[k-1] {
			out = append(out, DiffLine{' ', "…"})
		}
	}
	return out
}

// middle diffs what differs between the common ends.
func middle(x, y []string) []DiffLine {
	var all []DiffLine
	if len(x)*len(y) > maxDiffCells {
		for _, l := range x {
			all = append(all, DiffLine{'-', l})
		}
		for _, l := range y {
			all = append(all, DiffLine{'+', l})
		}
		return all
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			all = append(all, DiffLine{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			all = append(all, DiffLine{'-', x[i]})
			i++
		default:
			all = append(all, DiffLine{'+', y[j]})
			j++
		}
	}
	return all
}
