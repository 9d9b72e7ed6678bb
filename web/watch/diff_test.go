package watch

import (
	"slices"
	"testing"
)

func TestDiffLines(t *testing.T) {
	a := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n"
	b := "a: 1\nb: 2\nc: 30\nd: 4\ne: 5\nf: 6\ng: 7\n"
	got := diffLines(a, b, 1)
	want := []DiffLine{{Op: ' ', Text: "b: 2"}, {Op: '-', Text: "c: 3"}, {Op: '+', Text: "c: 30"}, {Op: ' ', Text: "d: 4"}, {Op: ' ', Text: "…"}, {Op: ' ', Text: "f: 6"}, {Op: '+', Text: "g: 7"}}
	if !slices.Equal(got, want) {
		t.Errorf("diff %q, want %q", got, want)
	}
}
