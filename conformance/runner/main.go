// Command runner runs the Kubernetes e2e suite built from this module
// against a sandbox of a kubeplay it starts (or against any cluster), and
// writes a report: each selected test's outcome grouped by SIG, the first
// line of each failure, the failures impossible.txt expects, and a summary.
// `go tool task conformance` builds what it needs and runs it; see
// ../README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

type options struct {
	e2e, ginkgo, kubectl string
	kubeplay, kubeconfig string
	focus, skip, sigs    string
	procs, runsAtOnce    int
	timeout              time.Duration
	contentType          string
	verifySA, deleteNS   bool
	skipImpossible       bool
	impossible, out      string
	reportOnly           bool
}

func main() {
	var o options
	flag.StringVar(&o.e2e, "e2e", "", "the e2e.test binary built from this module")
	flag.StringVar(&o.ginkgo, "ginkgo", "", "the ginkgo CLI, which runs e2e.test in parallel processes")
	flag.StringVar(&o.kubectl, "kubectl", "", "kubectl v1.35, for the sig-cli tests")
	flag.StringVar(&o.kubeplay, "kubeplay", "", "the kubeplay binary to serve sandboxes with: each run gets a new sandbox")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this cluster instead of a kubeplay sandbox")
	flag.StringVar(&o.focus, "focus", `\[Conformance\]`, "ginkgo focus: the tests to run")
	flag.StringVar(&o.skip, "skip", "", "ginkgo skip: tests of the focus not to run")
	flag.StringVar(&o.sigs, "sigs", "", "comma-separated SIGs (api-machinery,apps,...): one run per SIG, of its tests the focus selects, each with its own sandbox and timeout; empty: one run")
	flag.IntVar(&o.runsAtOnce, "runs-at-once", 1, "with -sigs, how many SIGs run at the same time (each with -procs processes)")
	flag.IntVar(&o.procs, "procs", 4, "parallel test processes (tests tagged [Serial] still run alone, at the end)")
	flag.DurationVar(&o.timeout, "timeout", 40*time.Minute, "timeout of each run; the tests it keeps from running are reported as not run")
	flag.StringVar(&o.contentType, "content-type", "application/vnd.kubernetes.protobuf", "the content type of the suite's clients (protobuf is its default)")
	flag.BoolVar(&o.verifySA, "verify-sa", true, "wait for the default ServiceAccount and kube-root-ca.crt in each test namespace, as the suite does by default")
	flag.BoolVar(&o.deleteNS, "delete-ns", true, "delete each test's namespace after it (false for a server with no namespace controller, such as a bare kube-apiserver)")
	flag.StringVar(&o.impossible, "impossible", "impossible.txt", "the tests that cannot pass here, and why")
	flag.BoolVar(&o.skipImpossible, "skip-impossible", true, "do not run the tests impossible.txt lists (most wait minutes for what never comes); they are reported as impossible, not run. false runs them too, which checks the list")
	flag.StringVar(&o.out, "out", "", "output directory: one directory per run (the suite's log, ginkgo's JSON and JUnit reports), report.md, results.tsv and summary.txt")
	flag.BoolVar(&o.reportOnly, "report-only", false, "do not run: write the report again from the runs in -out, every directory with a run.json (after editing impossible.txt, say)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("conformance: ")
	if o.out == "" {
		log.Fatal("-out is required")
	}
	// ginkgo runs e2e.test in the binary's directory: paths given to it
	// must be absolute.
	for _, p := range []*string{&o.e2e, &o.ginkgo, &o.kubectl, &o.kubeplay, &o.kubeconfig, &o.out} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				log.Fatal(err)
			}
			*p = abs
		}
	}
	if err := runAll(o); err != nil {
		log.Fatal(err)
	}
}

func runAll(o options) (err error) {
	rules, err := readImpossible(o.impossible)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	runs := plannedRuns(o)
	if o.reportOnly {
		if runs, err = recordedRuns(o.out); err != nil {
			return err
		}
	}
	// The report's header says what ran, when: a report written again
	// keeps the run's.
	header := reportHeader(o)
	headerPath := filepath.Join(o.out, "header.txt")
	if o.reportOnly {
		if b, err := os.ReadFile(headerPath); err == nil {
			header = string(b)
		}
		for _, rn := range runs {
			if err := rn.load(filepath.Join(o.out, rn.name)); err != nil {
				return err
			}
		}
	} else {
		if err := os.WriteFile(headerPath, []byte(header), 0o644); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := execute(ctx, o, runs, rules); err != nil {
			return err
		}
		// Interrupted, the report still says what ran.
		defer func() {
			if err == nil {
				err = context.Cause(ctx)
			}
		}()
	}
	for _, rn := range runs {
		if err := rn.collect(filepath.Join(o.out, rn.name), rules); err != nil {
			return err
		}
	}
	return writeReports(o, header, runs)
}

// plannedRuns is one run of the focus, or one per SIG of -sigs.
func plannedRuns(o options) []*run {
	if o.sigs == "" {
		return []*run{{name: "all", focus: o.focus, skip: o.skip}}
	}
	var runs []*run
	for sig := range strings.SplitSeq(o.sigs, ",") {
		sig = strings.TrimPrefix(strings.TrimSpace(sig), "sig-")
		if sig == "" {
			continue
		}
		focus := `\[sig-` + regexp.QuoteMeta(sig) + `\]`
		if o.focus != "" {
			focus += ".*(?:" + o.focus + ")"
		}
		runs = append(runs, &run{name: "sig-" + sig, focus: focus, skip: o.skip})
	}
	return runs
}

// recordedRuns is a run for each directory of out holding a run.json.
func recordedRuns(out string) ([]*run, error) {
	records, err := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("no run in %s (no */run.json)", out)
	}
	var runs []*run
	for _, rec := range records {
		runs = append(runs, &run{name: filepath.Base(filepath.Dir(rec))})
	}
	return runs, nil
}

// execute starts kubeplay (unless -kubeconfig names a cluster) and does the
// runs, -runs-at-once at a time, each in a new sandbox.
func execute(ctx context.Context, o options, runs []*run, rules []impossibleRule) error {
	var kp *kubeplay
	if o.kubeconfig == "" {
		if o.kubeplay == "" {
			return errors.New("-kubeplay or -kubeconfig is required")
		}
		var err error
		if kp, err = startKubeplay(ctx, o.kubeplay, filepath.Join(o.out, "kubeplay.log")); err != nil {
			return err
		}
		defer kp.stop()
		log.Printf("kubeplay serving on %s", kp.url)
	}
	// Runs at once share the kubeplay, each with its sandbox.
	slots := make(chan struct{}, max(o.runsAtOnce, 1))
	errs := make(chan error, len(runs))
	var wg sync.WaitGroup
	for _, rn := range runs {
		slots <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			errs <- rn.inSandbox(ctx, o, rules, kp)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// inSandbox does the run in a new sandbox of kp, or against -kubeconfig's
// cluster when kp is nil.
func (rn *run) inSandbox(ctx context.Context, o options, rules []impossibleRule, kp *kubeplay) error {
	dir := filepath.Join(o.out, rn.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kubeconfig := o.kubeconfig
	var sandbox string
	if kp != nil {
		kubeconfig = filepath.Join(dir, "kubeconfig")
		var err error
		if sandbox, err = kp.newSandbox(ctx, kubeconfig); err != nil {
			return err
		}
	}
	log.Printf("%s: running %q (skip %q), %d processes, timeout %s; log in %s", rn.name, rn.focus, rn.skip, o.procs, o.timeout, filepath.Join(dir, "e2e.log"))
	if err := rn.execute(ctx, o, rules, kubeconfig, dir); err != nil {
		return err
	}
	log.Printf("%s: done after %s", rn.name, rn.wall.Round(time.Second))
	if err := rn.save(dir); err != nil {
		return err
	}
	if sandbox != "" {
		if err := kp.deleteSandbox(context.WithoutCancel(ctx), sandbox); err != nil {
			log.Printf("%s: deleting sandbox %s: %v", rn.name, sandbox, err)
		}
	}
	return nil
}

// execute runs the suite once with the ginkgo CLI, as the suite is run
// against a real cluster: a skeleton provider (no cloud), not waiting for
// nodes or system pods to be ready (tests that need nodes look for them).
func (rn *run) execute(ctx context.Context, o options, rules []impossibleRule, kubeconfig, dir string) error {
	ginkgoFlags := []string{
		"--procs=" + fmt.Sprint(o.procs),
		"--focus=" + rn.focus,
		"--timeout=" + o.timeout.String(),
		"--json-report=" + filepath.Join(dir, "report.json"),
		"--junit-report=" + filepath.Join(dir, "junit.xml"),
		"--no-color",
		"-v",
		"--poll-progress-after=120s",
		"--poll-progress-interval=60s",
	}
	if rn.skip != "" {
		ginkgoFlags = append(ginkgoFlags, "--skip="+rn.skip)
	}
	if o.skipImpossible {
		for _, r := range rules {
			ginkgoFlags = append(ginkgoFlags, "--skip="+ginkgoPattern(r.re.String()))
		}
	}
	e2eFlags := []string{
		"--kubeconfig=" + kubeconfig,
		"--provider=skeleton",
		"--kube-api-content-type=" + o.contentType,
		fmt.Sprintf("--e2e-verify-service-account=%t", o.verifySA),
		fmt.Sprintf("--delete-namespace=%t", o.deleteNS),
		"--allowed-not-ready-nodes=-1",
		"--num-nodes=1",
		"--minStartupPods=0",
		"--kubectl-path=" + o.kubectl,
		// The namespace dumps on failure read pod logs; they only add noise.
		"--dump-logs-on-failure=false",
		"--report-dir=" + dir,
		"--e2e-output-dir=" + dir,
	}
	args := append(append(ginkgoFlags, o.e2e, "--"), e2eFlags...)
	logFile, err := os.Create(filepath.Join(dir, "e2e.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	// ginkgo stops at its own timeout; the deadline here only ends a run
	// whose clean-up hangs.
	runCtx, cancel := context.WithTimeout(ctx, o.timeout+5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, o.ginkgo, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Interrupted, ginkgo cleans up and still writes its reports.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 2 * time.Minute
	start := time.Now()
	err = cmd.Run()
	rn.wall = time.Since(start)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		rn.exitCode = exit.ExitCode() // failed tests
	case err != nil:
		return err
	}
	return nil
}

// suiteDescription is the e2e suite's name, which ginkgo puts before a
// test's full name when it matches --focus and --skip.
const suiteDescription = "Kubernetes e2e suite"

// ginkgoPattern is a regexp of impossible.txt, which matches the test's
// full name, as a ginkgo skip.
func ginkgoPattern(re string) string {
	if rest, ok := strings.CutPrefix(re, "^"); ok {
		return "^" + regexp.QuoteMeta(suiteDescription) + " " + rest
	}
	return re
}

// runRecord is what run.json keeps of a run, for -report-only.
type runRecord struct {
	Focus    string        `json:"focus"`
	Skip     string        `json:"skip"`
	Wall     time.Duration `json:"wall"`
	ExitCode int           `json:"exitCode"`
}

func (rn *run) save(dir string) error {
	b, err := json.MarshalIndent(runRecord{rn.focus, rn.skip, rn.wall, rn.exitCode}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
}

func (rn *run) load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return err
	}
	var rec runRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: %v", dir, err)
	}
	rn.focus, rn.skip, rn.wall, rn.exitCode = rec.Focus, rec.Skip, rec.Wall, rec.ExitCode
	return nil
}

// collect reads the run's results from ginkgo's report.
func (rn *run) collect(dir string, rules []impossibleRule) error {
	focus, err := regexp.Compile(rn.focus)
	if err != nil {
		return err
	}
	var skip *regexp.Regexp
	if rn.skip != "" {
		if skip, err = regexp.Compile(rn.skip); err != nil {
			return err
		}
	}
	rn.results, rn.suiteErrors, err = readResults(filepath.Join(dir, "report.json"), focus, skip, rules)
	if errors.Is(err, os.ErrNotExist) {
		rn.suiteErrors = append(rn.suiteErrors, "no report: the suite did not finish (see its e2e.log)")
		return nil
	}
	return err
}

func writeReports(o options, header string, runs []*run) error {
	var summary, tsv, md strings.Builder
	writeSummary(&summary, runs)
	writeTSV(&tsv, runs)
	writeMarkdown(&md, header, runs)
	for name, s := range map[string]string{"summary.txt": summary.String(), "results.tsv": tsv.String(), "report.md": md.String()} {
		if err := os.WriteFile(filepath.Join(o.out, name), []byte(s), 0o644); err != nil {
			return err
		}
	}
	fmt.Print(summary.String())
	log.Printf("report: %s", filepath.Join(o.out, "report.md"))
	return nil
}

// reportHeader says what ran against what: the date, the commit of the
// working tree (kubeplay's, when run from the repository), the options.
func reportHeader(o options) string {
	commit := "unknown commit"
	if out, err := exec.Command("git", "log", "-1", "--format=%h (%cs)").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += ", with uncommitted changes"
		}
	}
	target := "a sandbox of kubeplay at " + commit
	if o.kubeconfig != "" {
		target = "the cluster of " + o.kubeconfig
	}
	host, _ := os.Hostname()
	skipping := "the tests impossible.txt lists not run"
	if !o.skipImpossible {
		skipping = "the tests impossible.txt lists run too"
	}
	return fmt.Sprintf("%s, against %s; on %s (%d CPUs); %d processes, %d run(s) at once, timeout %s per run, content type %s, verify-sa %t; %s.",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), target, host, runtime.NumCPU(), o.procs, max(o.runsAtOnce, 1), o.timeout, o.contentType, o.verifySA, skipping)
}
