// Package linediff is the line diff the UI shows between two versions of
// an object: a longest common subsequence of their lines.
package linediff

import "slices"

// maxCells bounds the work of one diff (changed lines × changed lines);
// beyond it the diff shows the old lines removed and the new ones added.
const maxCells = 1_000_000

// Line is one line of a diff: Op is ' ' (in both), '-' (only in the old
// version) or '+' (only in the new one).
type Line struct {
	Op   byte
	Text string
}

// Diff is the line diff from x to y.
func Diff(x, y []string) []Line {
	// Lines common to both ends need no search: changes are usually small.
	var all, tail []Line
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		all = append(all, Line{' ', x[0]})
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		tail = append(tail, Line{' ', x[len(x)-1]})
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	slices.Reverse(tail)
	all = append(all, middle(x, y)...)
	return append(all, tail...)
}

// middle diffs what differs between the common ends.
func middle(x, y []string) []Line {
	var all []Line
	if len(x)*len(y) > maxCells {
		for _, l := range x {
			all = append(all, Line{'-', l})
		}
		for _, l := range y {
			all = append(all, Line{'+', l})
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
			all = append(all, Line{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			all = append(all, Line{'-', x[i]})
			i++
		default:
			all = append(all, Line{'+', y[j]})
			j++
		}
	}
	return all
}

// Near marks the lines of d to show: every change, and n unchanged lines
// on each side of it.
func Near(d []Line, n int) []bool {
	keep := make([]bool, len(d))
	for k, l := range d {
		if l.Op != ' ' {
			for c := max(0, k-n); c <= min(len(d)-1, k+n); c++ {
				keep[c] = true
			}
		}
	}
	return keep
}
