package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"kubeplay/e2e"
)

// BenchmarkServe_Start measures what someone waits for after typing
// `kubeplay serve`: from the launch of the binary to /readyz answering ok
// (ms-ready), and the memory the process holds then (MB-rss, of which
// MB-anon is its own: the rest are pages of the binary, run as a copy as
// an installed one would be; see e2e.Start), with a new data directory
// (fresh) and with one a previous run left (existing): a bare control plane
// (kube-apiserver alone), then fresh with the simulated cluster, serve's
// default.
func BenchmarkServe_Start(b *testing.B) {
	b.Run("fresh", func(b *testing.B) {
		benchmarkStart(b, func() string { return b.TempDir() })
	})
	b.Run("existing", func(b *testing.B) {
		dir := b.TempDir()
		e2e.Start(b, dir).Stop()
		benchmarkStart(b, func() string { return dir })
	})
	b.Run("fresh-simulated-cluster", func(b *testing.B) {
		benchmarkStart(b, func() string { return b.TempDir() }, "--simulate-workloads")
	})
}

func benchmarkStart(b *testing.B, dataDir func() string, flags ...string) {
	var ready time.Duration
	var rss, anon float64
	n := 0
	for b.Loop() {
		b.StopTimer()
		dir := dataDir()
		b.StartTimer()
		s := e2e.Start(b, dir, flags...)
		ready += untilReady(b, s)
		r, a := memory(s.PID)
		rss, anon = rss+r, anon+a
		n++
		b.StopTimer()
		s.Stop()
		b.StartTimer()
	}
	b.ReportMetric(0, "ns/op") // the ms to ready, not the whole start and stop
	b.ReportMetric(float64(ready.Microseconds())/1000/float64(n), "ms-ready")
	if rss > 0 {
		b.ReportMetric(rss/float64(n), "MB-rss")
		b.ReportMetric(anon/float64(n), "MB-anon")
	}
}

// untilReady waits for s's /readyz to answer ok and returns the time from
// its launch.
func untilReady(b *testing.B, s *e2e.Server) time.Duration {
	b.Helper()
	for {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(s.Launched)
			}
		}
		if time.Since(s.Launched) > 30*time.Second {
			b.Fatalf("/readyz: not ok after 30 s (%v)", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// memory returns the resident memory of process pid in MB, all of it and
// its anonymous part; zeros where /proc is not there to tell.
func memory(pid int) (rss, anon float64) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(status)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "RssAnon:":
			anon = kb / 1024
		}
	}
	return rss, anon
}
