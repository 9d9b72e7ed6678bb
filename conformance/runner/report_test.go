package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadImpossible(t *testing.T) {
	dir := t.TempDir()
	rules, err := readImpossible(writeFile(t, dir, "ok.txt", []byte("# comment\n\nreason: runs a webhook\n^\\[sig-a\\] Webhook\nreason: needs DNS\nDNS should\n")))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"[sig-a] Webhook should deny": "runs a webhook",
		"[sig-b] DNS should resolve":  "needs DNS",
		"[sig-b] Services should":     "",
	} {
		if got := impossibleReason(rules, name); got != want {
			t.Errorf("impossibleReason(%q) = %q, want %q", name, got, want)
		}
	}
	for _, bad := range []string{"^orphan\n", "reason: x\n[unclosed\n"} {
		if _, err := readImpossible(writeFile(t, dir, "bad.txt", []byte(bad))); err == nil {
			t.Errorf("readImpossible(%q): no error", bad)
		}
	}
}

// TestReadResults classifies the specs of a ginkgo report: passed, failed,
// failed as impossible.txt expects, skipped by the suite, kept from running
// or interrupted by the run's timeout, and left out by the focus (not counted).
func TestReadResults(t *testing.T) {
	spec := func(text string, state types.SpecState, msg string) types.SpecReport {
		return types.SpecReport{
			ContainerHierarchyTexts: []string{"[sig-apps] Job"},
			LeafNodeText:            text + " [Conformance]",
			LeafNodeType:            types.NodeTypeIt,
			State:                   state,
			Failure:                 types.Failure{Message: msg},
			RunTime:                 2 * time.Second,
		}
	}
	report := []types.Report{{
		SuiteDescription: "Kubernetes e2e suite",
		SpecReports: types.SpecReports{
			spec("should pass", types.SpecStatePassed, ""),
			spec("should fail", types.SpecStateFailed, "\n  timed out waiting\nmore"),
			spec("should fail by exit code", types.SpecStateFailed, "pod failed"),
			spec("should pass though listed", types.SpecStatePassed, ""),
			spec("should be skipped", types.SpecStateSkipped, "Only supported for providers [gce]"),
			spec("should not run", types.SpecStateSkipped, ""),
			spec("should not run as listed", types.SpecStateSkipped, ""),
			spec("should time out", types.SpecStateTimedout, "A spec timeout occurred"),
			spec("should be interrupted", types.SpecStateInterrupted, "Interrupted by Timeout"),
			spec("should be cut short", types.SpecStateTimedout, "A suite timeout occurred"),
			{LeafNodeText: "not conformance", LeafNodeType: types.NodeTypeIt, State: types.SpecStateSkipped},
			{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no cluster"}},
		},
	}}
	b, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "report.json", b)
	rules := []impossibleRule{{regexp.MustCompile(`exit code|though listed|as listed`), "runs the image's command"}}
	results, suiteErrors, err := readResults(path, regexp.MustCompile(`\[Conformance\]`), nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		got = append(got, r.sig+"|"+r.outcome+"|"+strings.TrimPrefix(r.name, "[sig-apps] Job ")+"|"+r.detail+"|"+r.listedImpossible)
	}
	want := []string{
		"sig-apps|passed|should pass [Conformance]||",
		"sig-apps|failed|should fail [Conformance]|timed out waiting|",
		"sig-apps|impossible|should fail by exit code [Conformance]|runs the image's command (pod failed)|",
		"sig-apps|passed|should pass though listed [Conformance]||runs the image's command",
		"sig-apps|skipped|should be skipped [Conformance]|Only supported for providers [gce]|",
		"sig-apps|not run|should not run [Conformance]||",
		"sig-apps|impossible|should not run as listed [Conformance]|runs the image's command (not run)|",
		"sig-apps|failed|should time out [Conformance]|A spec timeout occurred|",
		"sig-apps|not run|should be interrupted [Conformance]|Interrupted by Timeout|",
		"sig-apps|not run|should be cut short [Conformance]|A suite timeout occurred|",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(suiteErrors) != 1 || !strings.Contains(suiteErrors[0], "no cluster") {
		t.Errorf("suite errors = %q, want the SynchronizedBeforeSuite failure", suiteErrors)
	}

	var summary strings.Builder
	writeSummary(&summary, []*run{{results: results}})
	if want := "sig-apps:              2 passed, 2 failed, 2 impossible, 1 skipped, 3 not run of 10\n"; !strings.HasPrefix(summary.String(), want) {
		t.Errorf("summary:\n%s\nwant it to start with:\n%s", summary.String(), want)
	}
}

func TestPlannedRuns(t *testing.T) {
	runs := plannedRuns(options{sigs: "api-machinery, sig-apps", focus: `\[Conformance\]`, skip: `\[Slow\]`})
	if len(runs) != 2 || runs[0].name != "sig-api-machinery" || runs[1].name != "sig-apps" {
		t.Fatalf("runs = %+v", runs)
	}
	if want := `\[sig-apps\].*(?:\[Conformance\])`; runs[1].focus != want || runs[1].skip != `\[Slow\]` {
		t.Errorf("focus, skip = %q, %q; want %q, \\[Slow\\]", runs[1].focus, runs[1].skip, want)
	}
}

func TestGinkgoPattern(t *testing.T) {
	for re, want := range map[string]string{
		`^\[sig-a\] Webhook`: `^Kubernetes e2e suite \[sig-a\] Webhook`,
		`DNS should`:         `DNS should`,
	} {
		if got := ginkgoPattern(re); got != want {
			t.Errorf("ginkgoPattern(%q) = %q, want %q", re, got, want)
		}
	}
}

func TestAllResultsCountsATestOnce(t *testing.T) {
	first := &run{results: []result{
		{sig: "sig-a", name: "[sig-a] x", outcome: passed},
		{sig: "sig-a", name: "[sig-a] y", outcome: notRun},
		{sig: "sig-a", name: "[sig-a] z", outcome: failed},
	}}
	second := &run{results: []result{
		{sig: "sig-a", name: "[sig-a] y", outcome: failed},
		{sig: "sig-a", name: "[sig-a] z", outcome: notRun},
	}}
	var got []string
	for _, r := range allResults([]*run{first, second}) {
		got = append(got, r.name+" "+r.outcome)
	}
	if want := "[sig-a] x passed,[sig-a] y failed,[sig-a] z failed"; strings.Join(got, ",") != want {
		t.Errorf("allResults = %q, want %q", strings.Join(got, ","), want)
	}
}
