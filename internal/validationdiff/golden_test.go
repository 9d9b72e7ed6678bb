package main

import (
	"os"
	"strings"
	"testing"
)

// TestRecordedOracle replays the recorded requests (testdata/oracle.jsonl.gz,
// for the types it holds) against an in-process kubeplay: each answer must
// be the oracle's, but for the accepted differences and the known ones
// (testdata/known.txt), which must still differ (re-record when one is
// fixed).
func TestRecordedOracle(t *testing.T) {
	golden, err := readGolden("testdata/oracle.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/known.txt")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		known[line] = true
	}
	var types []string
	for _, r := range golden {
		if len(types) == 0 || types[len(types)-1] != r.Type {
			types = append(types, r.Type)
		}
	}
	c, err := loadCorpus("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	kubeplay, err := newInProcessTarget(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t.Context(), c.only(types), "golden", kubeplay)
	if err != nil {
		t.Fatal(err)
	}
	results := pair(golden, got)
	if len(results) != len(golden) {
		t.Errorf("kubeplay was sent %d requests the recording lacks: the corpus or the mutations changed; record again", len(results)-len(golden))
	}
	for _, r := range results {
		switch {
		case r.differs() && !known[r.key()]:
			t.Errorf("%s %s %s:\n  oracle:   %s\n  kubeplay: %s", r.Type, r.Verb, r.Mutation, r.Oracle, r.Kubeplay)
		case !r.differs() && known[r.key()]:
			t.Errorf("%s %s %s: now answered as the oracle does; remove it from testdata/known.txt", r.Type, r.Verb, r.Mutation)
		}
	}
}
