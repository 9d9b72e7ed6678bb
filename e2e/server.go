package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kubeplay/internal/copyfile"
)

// Server is a `kubeplay serve` process a test started. It stops when the
// test ends, or earlier with Stop.
type Server struct {
	// URL is where it serves, as it printed it.
	URL string
	// PID is its process id.
	PID int
	// Launched is when its process started.
	Launched time.Time

	tb      testing.TB
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process exited; then err is set
	err     error
	stopped bool
}

// Start runs `kubeplay serve` on a free port with its data in dir (and the
// flags given) and returns once it listens: the port is known once it
// prints its address, after it listens, so nothing is polled.
func Start(tb testing.TB, dir string, flags ...string) *Server {
	tb.Helper()
	// A bare control plane unless the test asks for the simulated
	// cluster: most tests compare the root cluster with kube-apiserver
	// alone.
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--simulate-workloads=false"}, flags...)
	cmd := exec.Command(kubeplayBinary(tb), args...)
	first := &firstLine{line: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = first, os.Stderr
	s := &Server{tb: tb, cmd: cmd, exited: make(chan struct{}), Launched: time.Now()}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s.PID = cmd.Process.Pid
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	tb.Cleanup(s.Stop)
	var line string
	select {
	case line = <-first.line:
	case <-s.exited:
		tb.Fatalf("kubeplay %s exited before it served: %v", strings.Join(args, " "), s.err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "kubeplay is serving on ")
	if !ok {
		tb.Fatalf("kubeplay serve printed %q first", line)
	}
	s.URL = url
	return s
}

// Stop ends the server as Ctrl-C does, so that it closes its databases, and
// fails the test unless it then exits cleanly. Calls after the first do
// nothing.
func (s *Server) Stop() {
	s.tb.Helper()
	if s.stopped {
		return
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(os.Interrupt)
	<-s.exited
	if s.err != nil {
		s.tb.Errorf("kubeplay serve: %v", s.err)
	}
}

// firstLine is a process's output, of which it sends the first line.
type firstLine struct {
	buf  []byte
	line chan string
}

func (w *firstLine) Write(b []byte) (int, error) {
	if w.line != nil {
		w.buf = append(w.buf, b...)
		if i := strings.IndexByte(string(w.buf), '\n'); i >= 0 {
			w.line <- string(w.buf[:i])
			w.line, w.buf = nil, nil
		}
	}
	return len(b), nil
}

// binary is the kubeplay binary every Server of this test process runs,
// built by the first Start and removed by Main.
var binary struct {
	once      sync.Once
	dir, path string
	err       error
}

// Main runs the tests of m, removes the binary they ran and exits, for a
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// kubeplayBinary builds kubeplay once. It runs a copy: the pages of a
// binary that count in its RSS depend on how it came into the page cache,
// and a binary just linked (the linker writes through a memory map) counts
// ~35 MB on Linux 6.18 here, the same bytes copied ~22 MB, as a binary
// installed would (BenchmarkServe_Start measures it).
func kubeplayBinary(tb testing.TB) string {
	tb.Helper()
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "kubeplay-e2e-"); binary.err != nil {
			return
		}
		linked := filepath.Join(binary.dir, "linked")
		if out, err := exec.Command("go", "build", "-o", linked, "kubeplay").CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		path := filepath.Join(binary.dir, "kubeplay")
		if binary.err = copyfile.Executable(path, linked); binary.err == nil {
			binary.path = path
			binary.err = os.Remove(linked)
		}
	})
	if binary.err != nil {
		tb.Fatal(binary.err)
	}
	return binary.path
}

// WaitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func WaitLimit(tb testing.TB) time.Duration {
	if t, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := t.Deadline(); ok {
			return max(time.Until(d)-30*time.Second, time.Until(d)/2)
		}
	}
	return 2 * time.Minute
}

// TimeoutFlag is kubectl's --timeout for a wait that must end: WaitLimit.
func TimeoutFlag(tb testing.TB) string {
	return "--timeout=" + WaitLimit(tb).Round(time.Second).String()
}
