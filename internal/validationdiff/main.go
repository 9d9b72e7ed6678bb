// Command validationdiff compares what kubeplay and a real kube-apiserver
// (the oracle) answer to invalid objects. It takes the valid objects of its
// corpus (testdata/corpus/*.yaml, one or more per built-in type), changes one
// field at a time (removed, of the wrong type, an invalid or out-of-enum
// value, negative, a duplicated list item, a too long name, an invalid map
// key; as the type's OpenAPI schema types the field), plus the named
// mutations the corpus adds by hand, and sends each as a create (POST) and
// as an update (PUT of the stored object) with dryRun=All to both servers.
// It reports, per type, how many mutations it tried and how many got a
// different status code, reason, or causes (field, reason, message; the
// message too when neither has causes), apart from the accepted ones (a
// 500 from kube-apiserver where kubeplay gives a 4xx), then the types the
// oracle serves that the corpus has no object of.
//
//	go run ./internal/validationdiff -oracle https://127.0.0.1:6453 -token oracle-token [-types Secret,Pod]
//
// kubeplay runs in process unless -kubeplay names its URL. Each run works
// in a fresh namespace (and names its cluster-scoped objects) after a run
// ID; the answers are compared with the ID and UIDs written as RUNID and
// UID. With -record FILE it writes the oracle's answers to FILE, and with
// -known FILE the requests whose answers differ: the package's test
// replays the recorded requests against kubeplay without the oracle and
// expects the oracle's answers to all but the known differences.
//
//	go tool task validationdiff:record
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "validationdiff:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("validationdiff", flag.ContinueOnError)
	oracleURL := fs.String("oracle", "https://127.0.0.1:6453", "URL of the reference kube-apiserver")
	token := fs.String("token", "oracle-token", "bearer token for the oracle")
	kubeplayURL := fs.String("kubeplay", "", "URL of a kubeplay server (default: one in process)")
	kubeplayToken := fs.String("kubeplay-token", "", "bearer token for -kubeplay")
	types := fs.String("types", "", "comma-separated kinds to try (default: all the corpus has)")
	corpusDir := fs.String("corpus", "internal/validationdiff/testdata/corpus", "directory of the corpus")
	record := fs.String("record", "", "write the oracle's answers to this file")
	known := fs.String("known", "", "write the requests whose answers differ to this file (with -record)")
	verbose := fs.Bool("v", false, "list every mutation's answers, not only the differences")
	if err := fs.Parse(args); err != nil {
		return err
	}
	corpus, err := loadCorpus(*corpusDir)
	if err != nil {
		return err
	}
	if *types != "" {
		corpus = corpus.only(strings.Split(*types, ","))
	}
	oracle := newHTTPTarget(*oracleURL, *token)
	var kubeplay target
	if *kubeplayURL != "" {
		kubeplay = newHTTPTarget(*kubeplayURL, *kubeplayToken)
	} else {
		if kubeplay, err = newInProcessTarget(ctx); err != nil {
			return err
		}
	}
	runID := strconv.FormatInt(time.Now().Unix()%(36*36*36*36*36*36), 36)
	runID = fmt.Sprintf("%06s", runID)
	start := time.Now()
	results, err := compare(ctx, corpus, runID, oracle, kubeplay)
	if err != nil {
		return err
	}
	report(stdout, corpus, results, *verbose)
	fmt.Fprintf(stdout, "\n%d requests to each server in %s\n", len(results), time.Since(start).Round(time.Second))
	if *types == "" {
		missing, err := uncovered(ctx, oracle, corpus)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nserved types without a corpus object (%d): %s\n", len(missing), strings.Join(missing, ", "))
	}
	if *record != "" {
		if err := writeGolden(*record, results); err != nil {
			return err
		}
	}
	if *known != "" {
		return writeKnown(*known, results)
	}
	return nil
}

// report prints, per type, the mutations tried, those that differ and
// those whose difference is accepted, then the differences.
func report(w io.Writer, c corpus, results []result, verbose bool) {
	type count struct{ tried, differ, accepted int }
	counts := map[string]*count{}
	for _, r := range results {
		n := counts[r.Type]
		if n == nil {
			n = &count{}
			counts[r.Type] = n
		}
		n.tried++
		switch {
		case r.accepted() != "":
			n.accepted++
		case r.differs():
			n.differ++
		}
	}
	width := len("type")
	for _, t := range c.types() {
		width = max(width, len(t))
	}
	fmt.Fprintf(w, "%-*s %8s %8s %8s\n", width, "type", "tried", "differ", "accepted")
	total := count{}
	for _, t := range c.types() {
		n := counts[t]
		if n == nil {
			n = &count{}
		}
		fmt.Fprintf(w, "%-*s %8d %8d %8d\n", width, t, n.tried, n.differ, n.accepted)
		total.tried += n.tried
		total.differ += n.differ
		total.accepted += n.accepted
	}
	fmt.Fprintf(w, "%-*s %8d %8d %8d\n", width, "total", total.tried, total.differ, total.accepted)
	for _, r := range results {
		if r.same() && !verbose {
			continue
		}
		fmt.Fprintf(w, "\n%s %s %s\n", r.Type, r.Verb, r.Mutation)
		fmt.Fprintf(w, "  oracle:   %s\n", r.Oracle)
		if !r.same() {
			fmt.Fprintf(w, "  kubeplay: %s\n", r.Kubeplay)
		}
		if reason := r.accepted(); reason != "" {
			fmt.Fprintf(w, "  accepted: %s\n", reason)
		}
	}
}
