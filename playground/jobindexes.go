package playground

import (
	"slices"
	"strconv"
	"strings"
)

// indexIntervals are a set of completion indexes of an Indexed Job, as the
// ordered, disjoint intervals that status.completedIndexes and
// status.failedIndexes spell "1,3-5,7".
type indexIntervals []indexInterval

type indexInterval struct{ first, last int }

// parseIndexes reads intervals written as the API writes them, keeping the
// indexes below completions; what does not parse is left out (the API
// validated what it stored).
func parseIndexes(s string, completions int) indexIntervals {
	var out indexIntervals
	if s == "" {
		return out
	}
	for part := range strings.SplitSeq(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(a)
		if err != nil || first >= completions {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(b); err != nil {
				continue
			}
		}
		out = out.with(first, min(last, completions-1))
	}
	return out
}

// with returns the intervals with first..last added.
func (iv indexIntervals) with(first, last int) indexIntervals {
	out := append(slices.Clone(iv), indexInterval{first, last})
	slices.SortFunc(out, func(a, b indexInterval) int { return a.first - b.first })
	merged := out[:0]
	for _, in := range out {
		if n := len(merged); n > 0 && in.first <= merged[n-1].last+1 {
			merged[n-1].last = max(merged[n-1].last, in.last)
			continue
		}
		merged = append(merged, in)
	}
	return merged
}

// withIndexes returns the intervals with each of ixs added.
func (iv indexIntervals) withIndexes(ixs ...int) indexIntervals {
	for _, ix := range ixs {
		iv = iv.with(ix, ix)
	}
	return iv
}

func (iv indexIntervals) has(ix int) bool {
	for _, in := range iv {
		if ix >= in.first && ix <= in.last {
			return true
		}
	}
	return false
}

func (iv indexIntervals) total() int {
	n := 0
	for _, in := range iv {
		n += in.last - in.first + 1
	}
	return n
}

// overlap counts the indexes both iv and other hold.
func (iv indexIntervals) overlap(other indexIntervals) int {
	n := 0
	for _, a := range iv {
		for _, b := range other {
			n += max(0, min(a.last, b.last)-max(a.first, b.first)+1)
		}
	}
	return n
}

func (iv indexIntervals) String() string {
	var b strings.Builder
	for i, in := range iv {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(in.first))
		if in.last > in.first {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(in.last))
		}
	}
	return b.String()
}
