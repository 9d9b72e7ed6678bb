package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// The outcomes of a selected test.
const (
	passed     = "passed"
	failed     = "failed"
	impossible = "impossible" // listed in impossible.txt, and failed or not run
	skipped    = "skipped"    // the suite skipped it (no feature, provider, enough nodes...)
	notRun     = "not run"    // selected, but the run's timeout came first, or interrupted it
)

var outcomes = []string{passed, failed, impossible, skipped, notRun}

// result is one selected test's outcome.
type result struct {
	sig     string
	name    string
	outcome string
	seconds float64
	// detail is the first line of the failure or of the skip message, or
	// the reason a failure was expected.
	detail string
	// listedImpossible is impossible.txt's reason for a test that passed
	// anyway: the list wants updating.
	listedImpossible string
}

// run is one ginkgo run: its focus, and what its report says.
type run struct {
	name        string // the directory under the output, e.g. sig-apps
	focus, skip string
	wall        time.Duration
	exitCode    int
	results     []result
	suiteErrors []string // failures of suite-level nodes (BeforeSuite, ...)
}

var sigPattern = regexp.MustCompile(`\[sig-[a-z-]+\]`)

// sigOf is the SIG a test name carries first, without brackets.
func sigOf(name string) string {
	if s := sigPattern.FindString(name); s != "" {
		return strings.Trim(s, "[]")
	}
	return "no SIG"
}

// readResults reads a run's ginkgo JSON report. The report lists every spec
// of the binary, and ginkgo marks those the focus left out and those a
// timeout kept from running alike (skipped, no message), so which were
// selected is worked out again from the focus and skip.
func readResults(path string, focus, skip *regexp.Regexp, rules []impossibleRule) ([]result, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	var results []result
	var suiteErrors []string
	for _, rep := range reports {
		for _, spec := range rep.SpecReports {
			if spec.LeafNodeType != types.NodeTypeIt {
				if spec.State.Is(types.SpecStateFailureStates) {
					suiteErrors = append(suiteErrors, fmt.Sprintf("%s %s: %s", spec.LeafNodeType, spec.State, firstLine(spec.Failure.Message)))
				}
				continue
			}
			name := spec.FullText()
			text := rep.SuiteDescription + " " + name
			if focus != nil && !focus.MatchString(text) || skip != nil && skip.MatchString(text) {
				continue
			}
			r := result{sig: sigOf(name), name: name, seconds: spec.RunTime.Seconds(), detail: firstLine(spec.Failure.Message)}
			reason := impossibleReason(rules, name)
			// A test the run's timeout cut short did not run to its end.
			cutShort := spec.State.Is(types.SpecStateSkipped|types.SpecStateInterrupted) ||
				spec.State == types.SpecStateTimedout && strings.HasPrefix(r.detail, "A suite timeout occurred")
			switch {
			case spec.State == types.SpecStatePending:
				continue
			case spec.State == types.SpecStatePassed:
				r.outcome, r.listedImpossible = passed, reason
			case spec.State == types.SpecStateSkipped && r.detail != "":
				r.outcome = skipped
			case reason != "":
				// Failed, or not run: left out by -skip-impossible
				// or by the timeout.
				why := r.detail
				if cutShort {
					why = "not run"
				}
				r.outcome, r.detail = impossible, reason+" ("+why+")"
			case cutShort:
				r.outcome = notRun
			default:
				r.outcome = failed
			}
			results = append(results, r)
		}
	}
	return results, suiteErrors, nil
}

// firstLine is the first non-blank line of msg, trimmed.
func firstLine(msg string) string {
	for line := range strings.Lines(msg) {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// tally counts outcomes per SIG.
type tally map[string]map[string]int

func tallyOf(results []result) (tally, []string) {
	t := tally{}
	for _, r := range results {
		if t[r.sig] == nil {
			t[r.sig] = map[string]int{}
		}
		t[r.sig][r.outcome]++
	}
	sigs := make([]string, 0, len(t))
	for sig := range t {
		sigs = append(sigs, sig)
	}
	sort.Strings(sigs)
	return t, sigs
}

// summaryLine is "P passed, F failed, I impossible, S skipped, N not run of
// T" for the counts c.
func summaryLine(c map[string]int) string {
	var parts []string
	total := 0
	for _, o := range outcomes {
		parts = append(parts, fmt.Sprintf("%d %s", c[o], o))
		total += c[o]
	}
	return fmt.Sprintf("%s of %d", strings.Join(parts, ", "), total)
}

// writeSummary prints one line per SIG and the total.
func writeSummary(w io.Writer, runs []*run) {
	all := allResults(runs)
	t, sigs := tallyOf(all)
	total := map[string]int{}
	for _, sig := range sigs {
		fmt.Fprintf(w, "%-22s %s\n", sig+":", summaryLine(t[sig]))
		for o, n := range t[sig] {
			total[o] += n
		}
	}
	fmt.Fprintf(w, "%-22s %s\n", "total:", summaryLine(total))
}

// writeTSV writes one line per selected test: SIG, outcome, seconds, name,
// detail.
func writeTSV(w io.Writer, runs []*run) {
	for _, r := range allResults(runs) {
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%s\t%s\n", r.sig, r.outcome, r.seconds, r.name, strings.ReplaceAll(r.detail, "\t", " "))
	}
}

// writeMarkdown writes the report: the runs, a table of outcomes per SIG,
// then each SIG's tests by outcome.
func writeMarkdown(w io.Writer, header string, runs []*run) {
	fmt.Fprintf(w, "# Conformance report\n\n%s\n\n", header)
	fmt.Fprintln(w, "| run | focus | skip | wall | exit |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, rn := range runs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d |\n", rn.name, tableCode(rn.focus), tableCode(rn.skip), rn.wall.Round(time.Second), rn.exitCode)
	}
	for _, rn := range runs {
		for _, e := range rn.suiteErrors {
			fmt.Fprintf(w, "\n%s: %s\n", rn.name, e)
		}
	}

	all := allResults(runs)
	t, sigs := tallyOf(all)
	fmt.Fprintf(w, "\n| SIG | %s | total |\n|---|%s---|\n", strings.Join(outcomes, " | "), strings.Repeat("---|", len(outcomes)))
	total := map[string]int{}
	for _, sig := range append(sigs, "total") {
		c := t[sig]
		if sig == "total" {
			c = total
		}
		row, n := "", 0
		for _, o := range outcomes {
			row += fmt.Sprintf(" %d |", c[o])
			n += c[o]
			if sig != "total" {
				total[o] += c[o]
			}
		}
		fmt.Fprintf(w, "| %s |%s %d |\n", sig, row, n)
	}

	var stale []result
	for _, r := range all {
		if r.outcome == passed && r.listedImpossible != "" {
			stale = append(stale, r)
		}
	}
	if len(stale) > 0 {
		fmt.Fprintln(w, "\n**Listed in impossible.txt but passed** (the list wants updating):")
		for _, r := range stale {
			fmt.Fprintf(w, "- %s (%s)\n", r.name, r.listedImpossible)
		}
	}

	for _, sig := range sigs {
		fmt.Fprintf(w, "\n## %s\n", sig)
		for _, o := range outcomes {
			var rs []result
			for _, r := range all {
				if r.sig == sig && r.outcome == o {
					rs = append(rs, r)
				}
			}
			if len(rs) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n### %s (%d)\n\n", o, len(rs))
			for _, r := range rs {
				if r.detail != "" && o != passed {
					fmt.Fprintf(w, "- %s (%.0fs)  \n  %s\n", r.name, r.seconds, r.detail)
				} else {
					fmt.Fprintf(w, "- %s (%.0fs)\n", r.name, r.seconds)
				}
			}
		}
	}
}

// tableCode is s as code in a Markdown table cell.
func tableCode(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// allResults is the runs' results in SIG, then name order. A test in
// several runs (a run of what an earlier one did not get to) counts once:
// the last run that ran it decides.
func allResults(runs []*run) []result {
	var all []result
	seen := map[string]int{}
	for _, rn := range runs {
		for _, r := range rn.results {
			i, ok := seen[r.name]
			switch {
			case !ok:
				seen[r.name] = len(all)
				all = append(all, r)
			case r.outcome != notRun || all[i].outcome == notRun:
				all[i] = r
			}
		}
	}
	slices.SortFunc(all, func(a, b result) int {
		if c := strings.Compare(a.sig, b.sig); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return all
}
