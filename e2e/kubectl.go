package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// KubectlRunner runs kubectl for a test: every command with the same
// leading flags, environment and standard input, which Flags, Env and
// Stdin change in a copy. Each runner has a discovery cache of its own
// (kubectl's is per host and port, which the servers of earlier tests and
// runs may have used with other APIs).
type KubectlRunner struct {
	tb     testing.TB
	binary string // kubectl on the PATH when empty
	flags  []string
	env    []string
	stdin  string
}

// Kubectl runs kubectl against the server at url, with no kubeconfig.
func Kubectl(tb testing.TB, url string) *KubectlRunner {
	return &KubectlRunner{tb: tb, flags: []string{"--cache-dir", tb.TempDir(), "--server", url}, env: []string{"KUBECONFIG=/dev/null"}}
}

// KubectlConfig runs kubectl with the kubeconfig at path.
func KubectlConfig(tb testing.TB, path string) *KubectlRunner {
	return &KubectlRunner{tb: tb, flags: []string{"--cache-dir", tb.TempDir()}, env: []string{"KUBECONFIG=" + path}}
}

// Flags returns k with flags added before each command's arguments.
func (k *KubectlRunner) Flags(flags ...string) *KubectlRunner {
	c := *k
	c.flags = append(slices.Clip(k.flags), flags...)
	return &c
}

// Env returns k with the variables (NAME=value) added to kubectl's
// environment.
func (k *KubectlRunner) Env(vars ...string) *KubectlRunner {
	c := *k
	c.env = append(slices.Clip(k.env), vars...)
	return &c
}

// Binary returns k running the kubectl at path (another release).
func (k *KubectlRunner) Binary(path string) *KubectlRunner {
	c := *k
	c.binary = path
	return &c
}

// Stdin returns k reading s as its standard input.
func (k *KubectlRunner) Stdin(s string) *KubectlRunner {
	c := *k
	c.stdin = s
	return &c
}

// Run runs kubectl with args and returns what it printed (standard output
// and error) and how it exited.
func (k *KubectlRunner) Run(args ...string) (string, error) {
	k.tb.Helper()
	out, err := k.command(args).CombinedOutput()
	return string(out), err
}

// Succeeds runs kubectl, which must succeed (else the test ends), and
// returns what it printed.
func (k *KubectlRunner) Succeeds(args ...string) string {
	k.tb.Helper()
	out, err := k.Run(args...)
	if err != nil {
		k.tb.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Eventually runs kubectl until it succeeds (else the test ends once
// WaitLimit has passed), and returns what it printed: for what a
// controller makes soon after the cluster starts.
func (k *KubectlRunner) Eventually(args ...string) string {
	k.tb.Helper()
	deadline := time.Now().Add(WaitLimit(k.tb))
	for {
		out, err := k.Run(args...)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			k.tb.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Fails runs kubectl, which must fail (else the test fails), and returns
// what it printed.
func (k *KubectlRunner) Fails(args ...string) string {
	k.tb.Helper()
	out, err := k.Run(args...)
	if err == nil {
		k.tb.Errorf("kubectl %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return out
}

// Start starts kubectl, a command that goes on (a watch), and leaves it
// running until the test ends.
func (k *KubectlRunner) Start(args ...string) *Running {
	k.tb.Helper()
	r := &Running{tb: k.tb, changed: make(chan struct{})}
	cmd := k.command(args)
	cmd.Stdout, cmd.Stderr = runningOutput{r, true}, runningOutput{r, false}
	if err := cmd.Start(); err != nil {
		k.tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		r.mu.Lock()
		r.exited = true
		r.notify()
		r.mu.Unlock()
		close(exited)
	}()
	k.tb.Cleanup(func() { cmd.Process.Kill(); <-exited })
	return r
}

func (k *KubectlRunner) command(args []string) *exec.Cmd {
	k.tb.Helper()
	path := k.binary
	if path == "" {
		var err error
		if path, err = exec.LookPath("kubectl"); err != nil {
			k.tb.Fatal("kubectl is not installed (go tool task deps installs it)")
		}
	}
	cmd := exec.Command(path, append(slices.Clip(k.flags), args...)...)
	cmd.Env = append(os.Environ(), k.env...)
	cmd.Stdin = strings.NewReader(k.stdin)
	return cmd
}

// Running is a kubectl command started by Start, and what it printed so
// far.
type Running struct {
	tb      testing.TB
	mu      sync.Mutex
	all     bytes.Buffer  // standard output and error
	stdout  bytes.Buffer  // standard output alone
	changed chan struct{} // closed, and replaced, when it prints or exits
	exited  bool
}

// Output returns what kubectl printed so far, on its standard output and
// error.
func (r *Running) Output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.all.String()
}

// Lines waits until kubectl printed n lines on its standard output and
// returns them; the test ends if kubectl exits first or if they take
// longer than WaitLimit.
func (r *Running) Lines(n int) []string {
	r.tb.Helper()
	timeout := time.After(WaitLimit(r.tb))
	for {
		r.mu.Lock()
		lines := strings.SplitAfter(r.stdout.String(), "\n")
		changed, exited := r.changed, r.exited
		r.mu.Unlock()
		lines = lines[:len(lines)-1] // the line being printed, if any
		if len(lines) >= n {
			for i, l := range lines[:n] {
				lines[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
			}
			return lines[:n]
		}
		if exited {
			r.tb.Fatalf("kubectl ended after %q", lines)
		}
		select {
		case <-changed:
		case <-timeout:
			r.tb.Fatalf("waiting for line %d; got %q", n, lines)
		}
	}
}

// notify wakes those waiting for a change; r.mu is held.
func (r *Running) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// runningOutput is where a Running's kubectl writes: its standard output
// (stdout) or error.
type runningOutput struct {
	r      *Running
	stdout bool
}

func (w runningOutput) Write(b []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.r.all.Write(b)
	if w.stdout {
		w.r.stdout.Write(b)
	}
	w.r.notify()
	return len(b), nil
}
