// Command benchoracle measures kubeplay side by side with a real
// kube-apiserver (the "oracle": kube-apiserver v1.35 with an embedded etcd,
// built outside this repository) and prints a Markdown table of both, the
// ratio and whether kubeplay meets its aim:
//
//   - launch → first /readyz 200, on a fresh, empty data directory: the time
//     from starting the process to the first 200 answer of /readyz;
//   - RSS at ready: the resident memory of the server's process tree at that
//     moment;
//   - 1,000 ConfigMap creates with 1 client, then with 8 clients (creates/s);
//   - LIST of those 1,000 ConfigMaps (one unpaginated JSON GET; the median of
//     several);
//   - watch fan-out: 1,000 watches on one collection, then one write at a
//     time; the time from sending the write to each watcher receiving its
//     event, p50 and p99 over several writes.
//
// A third column, the floor (floor.go), runs the same requests against the
// least a Go server must do for them (-floor=false leaves it out): what a
// row costs the client and Go's net/http over TLS on their own, which no
// server in Go goes below on the machine.
//
// Both servers serve TLS on 127.0.0.1 and start fresh for every run (after
// one unrecorded start of each, as the first start of a just-copied binary
// is several times slower); the client is plain net/http over HTTP/2 (TLS
// verification off, as both use self-signed certificates). Like client-go's,
// its transport asks for gzip (Accept-Encoding: gzip, decompressed as it is
// read), so that both servers compress a LIST of 128 KiB or more. Only one server
// runs at a time, and the runs
// alternate (kube-apiserver, kubeplay, kube-apiserver, …) so that both see
// the same machine load. Each figure is the median of -runs fresh starts,
// with the minimum and maximum beside it; the load average at the start and
// at the end is printed too, as the machine may be shared.
//
// The oracle is started directly (not through its start.sh, whose polling
// loop would blur the launch time) with the flags its start.sh passes:
// -state-dir (a fresh temporary directory each run), -port, -etcd-port and
// -token. Its wrapper would generate the service-account RSA key in a fresh
// state directory; a real kube-apiserver is given that key, so it is written
// before the clock starts (-oracle-pregen-sa-key=false counts it in). Both
// binaries are copied to a temporary directory first: a just-linked binary
// shows an inflated RSS on some kernels.
//
// The oracle must be built first (about 5 to 7 minutes the first time):
//
//	cd /work/shared/oracle && ORACLE_VERSION=1.35 ./build.sh   # -> /tmp/oracle-1.35/bin/kube-apiserver
//
// Then, from the repository root:
//
//	go tool task bench:oracle                         # or:
//	go build -o .task/kubeplay-bench . && go run ./internal/benchoracle -kubeplay .task/kubeplay-bench
//
// Every loop is bounded in count and in time, and everything listens and
// connects on 127.0.0.1 only.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	oracleBin    string
	kubeplayBin  string
	token        string
	runs         int
	n            int
	payload      int
	listReps     int
	watchers     int
	watchWrites  int
	pregenSAKey  bool
	copyBinaries bool
	keepLogs     bool
	floor        bool
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == floorFlag {
		if err := serveFloor(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchoracle floor:", err)
			os.Exit(1)
		}
		return
	}
	defOracle := os.Getenv("ORACLE_BIN")
	if defOracle == "" {
		defOracle = "/tmp/oracle-1.35/bin/kube-apiserver"
	}
	var c config
	flag.StringVar(&c.oracleBin, "oracle", defOracle, "the oracle binary (kube-apiserver + embedded etcd), built by the oracle's build.sh (default $ORACLE_BIN if set)")
	flag.StringVar(&c.kubeplayBin, "kubeplay", "bin/kubeplay", "the kubeplay binary")
	flag.StringVar(&c.token, "oracle-token", "oracle-token", "the oracle's bearer token (kubeplay is sent none: anonymous is admin)")
	flag.IntVar(&c.runs, "runs", 5, "fresh starts of each server (1 to 20)")
	flag.IntVar(&c.n, "n", 1000, "ConfigMaps to create per create row (and so listed)")
	flag.IntVar(&c.payload, "payload", 64, "bytes of data per ConfigMap")
	flag.IntVar(&c.listReps, "list-repeats", 7, "LISTs per run after one warm-up (the run's figure is their median)")
	flag.IntVar(&c.watchers, "watchers", 1000, "watches on the collection for the fan-out row")
	flag.IntVar(&c.watchWrites, "watch-writes", 10, "measured writes for the fan-out row per run (after one warm-up write)")
	flag.BoolVar(&c.pregenSAKey, "oracle-pregen-sa-key", true, "write the oracle's service-account key before starting the clock (a real kube-apiserver is given one)")
	flag.BoolVar(&c.copyBinaries, "copy", true, "run copies of the binaries in a temporary directory")
	flag.BoolVar(&c.keepLogs, "keep-logs", false, "keep the servers' logs and data directories")
	flag.BoolVar(&c.floor, "floor", true, "measure the floor too: the least a Go server does for these requests (floor.go)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "benchoracle:", err)
		os.Exit(1)
	}
}

// result is what one fresh start of one server measured.
type result struct {
	launch           time.Duration
	rss              int64 // bytes
	create1, create8 float64
	list             time.Duration
	watchP50         time.Duration
	watchP99         time.Duration
	proto            string
	version          string
}

type target struct {
	name  string // column heading
	bin   string
	token string
	// args returns the command line for a fresh start in dir on port.
	args func(dir string, port int) ([]string, error)
}

func run(c config) error {
	if c.runs < 1 || c.runs > 20 || c.n < 1 || c.n > 100000 || c.listReps < 1 || c.listReps > 100 ||
		c.watchers < 1 || c.watchers > 5000 || c.watchWrites < 1 || c.watchWrites > 100 || c.payload < 0 || c.payload > 1<<20 {
		return errors.New("a count flag is out of range (runs 1–20, n 1–100000, list-repeats 1–100, watchers 1–5000, watch-writes 1–100, payload 0–1 MiB)")
	}
	if fi, err := os.Stat(c.oracleBin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("the oracle binary %s is missing or not executable: build it first with\n\tcd /work/shared/oracle && ORACLE_VERSION=1.35 ./build.sh\n(about 5–7 minutes the first time), or point -oracle (or $ORACLE_BIN) at it", c.oracleBin)
	}
	if fi, err := os.Stat(c.kubeplayBin); err != nil || fi.IsDir() {
		return fmt.Errorf("the kubeplay binary %s is missing: go build -o %s .", c.kubeplayBin, c.kubeplayBin)
	}
	work, err := os.MkdirTemp("", "benchoracle-")
	if err != nil {
		return err
	}
	if !c.keepLogs {
		defer os.RemoveAll(work)
	}
	oracleBin, kubeplayBin := c.oracleBin, c.kubeplayBin
	if c.copyBinaries {
		// The oracle keeps its name: kube-apiserver's loopback client names
		// itself after argv[0].
		if oracleBin, err = copyFile(c.oracleBin, filepath.Join(work, "bin", filepath.Base(c.oracleBin))); err != nil {
			return err
		}
		if kubeplayBin, err = copyFile(c.kubeplayBin, filepath.Join(work, "bin", "kubeplay")); err != nil {
			return err
		}
	}

	oracle := target{name: "kube-apiserver", bin: oracleBin, token: c.token, args: func(dir string, port int) ([]string, error) {
		etcdPort, err := freePortPair()
		if err != nil {
			return nil, err
		}
		if c.pregenSAKey {
			if err := writeSAKey(filepath.Join(dir, "sa.key")); err != nil {
				return nil, err
			}
		}
		return []string{"-state-dir", dir, "-port", strconv.Itoa(port), "-etcd-port", strconv.Itoa(etcdPort), "-token", c.token}, nil
	}}
	kubeplay := target{name: "kubeplay", bin: kubeplayBin, args: func(dir string, port int) ([]string, error) {
		// A bare control plane, as the oracle is kube-apiserver alone.
		return []string{"serve", "--tls", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--data", dir, "--simulate-workloads=false"}, nil
	}}
	targets := []target{oracle, kubeplay}
	if c.floor {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		targets = append(targets, target{name: "floor", bin: self, args: func(_ string, port int) ([]string, error) {
			return []string{floorFlag, "127.0.0.1:" + strconv.Itoa(port)}, nil
		}})
	}

	load0 := loadAvg()
	began := time.Now()
	fmt.Fprintf(os.Stderr, "load average at start: %s\n", load0)
	// One unrecorded start of each: the first run of a just-copied binary
	// is several times slower to start.
	for _, t := range targets {
		fmt.Fprintf(os.Stderr, "warm-up start: %s ...\n", t.name)
		if _, err := measure(c, t, filepath.Join(work, t.name+"-warmup"), true); err != nil {
			return fmt.Errorf("warm-up start, %s: %w", t.name, err)
		}
	}
	results := make([][]result, len(targets))
	var lines []string
	for r := range c.runs {
		for i, t := range targets {
			fmt.Fprintf(os.Stderr, "run %d/%d: %s ...\n", r+1, c.runs, t.name)
			res, err := measure(c, t, filepath.Join(work, fmt.Sprintf("%s-%d", t.name, r+1)), false)
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", r+1, t.name, err)
			}
			results[i] = append(results[i], res)
			line := fmt.Sprintf("run %d %-14s ready %s, RSS %s, create c=1 %.0f/s, c=8 %.0f/s, LIST %s, watch p50 %s p99 %s (load %s)",
				r+1, t.name, fmtMS(res.launch), fmtMB(res.rss), res.create1, res.create8, fmtMS(res.list), fmtMS(res.watchP50), fmtMS(res.watchP99), loadAvg())
			fmt.Fprintln(os.Stderr, line)
			lines = append(lines, line)
		}
	}
	load1 := loadAvg()

	o, k := results[0], results[1]
	fmt.Printf("## kubeplay vs kube-apiserver (%s)\n\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Printf("kube-apiserver %s (the oracle, embedded etcd) vs kubeplay %s; %d fresh starts of each, alternating, one server at a time; "+
		"%d CPUs, %s/%s; client: Go net/http, %s over TLS, 127.0.0.1.\n\n",
		o[0].version, k[0].version, c.runs, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, o[0].proto)
	fmt.Printf("Load average (1, 5, 15 min): %s at the start, %s at the end (%s in all).\n\n", load0, load1, time.Since(began).Round(time.Second))
	fmt.Println("Each cell: the median of the runs [min–max]. \"kubeplay ×\": how many times better kubeplay's median is (above 1: kubeplay is better).")
	fmt.Println()
	var fl []result // the floor's runs, if measured
	floorHead, floorRule := "", ""
	if len(results) > 2 {
		fl = results[2]
		floorHead, floorRule = " floor: Go's net/http alone |", "---|"
		fmt.Println("The floor is the least a Go server must do for these requests (internal/benchoracle/floor.go): a server written in Go, kubeplay or kube-apiserver, cannot go below it on this machine with this client.")
		fmt.Println()
	}
	fmt.Println("| measure | kube-apiserver | kubeplay | kubeplay × | aim | met |" + floorHead)
	fmt.Println("|---|---|---|---|---|---|" + floorRule)

	durs := func(rs []result, f func(result) time.Duration) []float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, float64(f(r))/1e6)
		}
		return v
	}
	floats := func(rs []result, f func(result) float64) []float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, f(r))
		}
		return v
	}
	ms := func(v float64) string { return fmtMS(time.Duration(v * 1e6)) }
	cell := func(v []float64, f func(float64) string) string {
		lo, hi := slices.Min(v), slices.Max(v)
		if len(v) == 1 {
			return f(median(v))
		}
		return fmt.Sprintf("%s [%s–%s]", f(median(v)), f(lo), f(hi))
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "**no**"
	}

	// floorCell is the floor's cell of a row, with the trailing separator.
	floorCell := func(f func([]result) string) string {
		if fl == nil {
			return ""
		}
		return " " + f(fl) + " |"
	}

	// launch
	ol, kl := durs(o, func(r result) time.Duration { return r.launch }), durs(k, func(r result) time.Duration { return r.launch })
	fmt.Printf("| launch → `/readyz` ok, fresh data dir | %s | %s | %.1f× | ≤ 50 ms | %s |%s\n",
		cell(ol, ms), cell(kl, ms), median(ol)/median(kl), yes(median(kl) <= 50),
		floorCell(func(rs []result) string { return cell(durs(rs, func(r result) time.Duration { return r.launch }), ms) }))
	// RSS
	orss := floats(o, func(r result) float64 { return float64(r.rss) })
	krss := floats(k, func(r result) float64 { return float64(r.rss) })
	mb := func(v float64) string { return fmtMB(int64(v)) }
	fmt.Printf("| RSS at ready | %s | %s | %.1f× | ≤ 30 MB | %s |%s\n",
		cell(orss, mb), cell(krss, mb), median(orss)/median(krss), yes(median(krss) <= 30e6),
		floorCell(func(rs []result) string {
			return cell(floats(rs, func(r result) float64 { return float64(r.rss) }), mb)
		}))
	// creates
	perSec := func(v float64) string { return fmt.Sprintf("%.0f/s", v) }
	for _, row := range []struct {
		label string
		f     func(result) float64
	}{
		{fmt.Sprintf("%s ConfigMap creates, 1 client (creates/s)", fmtCount(c.n)), func(r result) float64 { return r.create1 }},
		{"same, 8 clients", func(r result) float64 { return r.create8 }},
	} {
		ov, kv := floats(o, row.f), floats(k, row.f)
		ratio := median(kv) / median(ov)
		fmt.Printf("| %s | %s | %s | %.1f× | ≥ 3× | %s |%s\n", row.label, cell(ov, perSec), cell(kv, perSec), ratio, yes(ratio >= 3),
			floorCell(func(rs []result) string { return cell(floats(rs, row.f), perSec) }))
	}
	// LIST
	olist, klist := durs(o, func(r result) time.Duration { return r.list }), durs(k, func(r result) time.Duration { return r.list })
	ratio := median(olist) / median(klist)
	fmt.Printf("| LIST of %s ConfigMaps (ms, median of %d per run) | %s | %s | %.1f× | ≤ half of kube-apiserver's | %s |%s\n",
		fmtCount(c.n), c.listReps, cell(olist, ms), cell(klist, ms), ratio, yes(median(klist) <= median(olist)/2),
		floorCell(func(rs []result) string { return cell(durs(rs, func(r result) time.Duration { return r.list }), ms) }))
	// watch
	o50, k50 := durs(o, func(r result) time.Duration { return r.watchP50 }), durs(k, func(r result) time.Duration { return r.watchP50 })
	o99, k99 := durs(o, func(r result) time.Duration { return r.watchP99 }), durs(k, func(r result) time.Duration { return r.watchP99 })
	wcell := func(p50, p99 []float64) string {
		s := fmt.Sprintf("%s / %s", ms(median(p50)), ms(median(p99)))
		if len(p99) > 1 {
			s += fmt.Sprintf(" [p99 %s–%s]", ms(slices.Min(p99)), ms(slices.Max(p99)))
		}
		return s
	}
	fmt.Printf("| watch fan-out, %s watchers on one collection, one write: p50 / p99 to delivery (ms, over %d writes per run) | %s | %s | p50 %.1f× / p99 %.1f× | p99 ≤ half of kube-apiserver's | %s |%s\n",
		fmtCount(c.watchers), c.watchWrites, wcell(o50, o99), wcell(k50, k99), median(o50)/median(k50), median(o99)/median(k99), yes(median(k99) <= median(o99)/2),
		floorCell(func(rs []result) string {
			return wcell(durs(rs, func(r result) time.Duration { return r.watchP50 }), durs(rs, func(r result) time.Duration { return r.watchP99 }))
		}))
	fmt.Println()
	fmt.Println("Runs:")
	fmt.Println()
	fmt.Println("```")
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println("```")
	return nil
}

// measure starts t fresh in dir, measures every row (only the launch and
// the RSS if startOnly), and stops it.
func measure(c config, t target, dir string, startOnly bool) (res result, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	if !c.keepLogs {
		defer os.RemoveAll(dir)
	}
	port, err := freePort()
	if err != nil {
		return res, err
	}
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return res, err
	}
	args, err := t.args(stateDir, port)
	if err != nil {
		return res, err
	}
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logf.Close()
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	cl := newClient(base, t.token)
	defer cl.close()

	cmd := exec.Command(t.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited := make(chan struct{})
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		if serr := stop(cmd, exited); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			err = fmt.Errorf("%w\nlast lines of %s:\n%s", err, logPath, tail(logPath, 15))
		}
	}()

	// launch → first /readyz 200: poll every 2 ms for the first 200 ms, then every 10 ms.
	ready := false
	for deadline := start.Add(2 * time.Minute); time.Now().Before(deadline); {
		select {
		case <-exited:
			return res, fmt.Errorf("the server exited during startup (%v)", cmd.ProcessState)
		default:
		}
		status, _, err := cl.do(context.Background(), "GET", "/readyz", nil, time.Second)
		if err == nil && status == http.StatusOK {
			res.launch = time.Since(start)
			res.rss = treeRSS(cmd.Process.Pid)
			ready = true
			break
		}
		if time.Since(start) < 200*time.Millisecond {
			time.Sleep(2 * time.Millisecond)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !ready {
		return res, errors.New("not ready within 2 minutes")
	}
	// The protocol and the version, outside the clock.
	if status, body, err := cl.do(context.Background(), "GET", "/version", nil, 10*time.Second); err == nil && status == 200 {
		var v struct {
			GitVersion string `json:"gitVersion"`
		}
		json.Unmarshal(body, &v)
		res.version = v.GitVersion
	}
	res.proto = cl.lastProto.Load().(string)
	if startOnly {
		return res, nil
	}

	for _, ns := range []string{"bench-c1", "bench-c8", "bench-watch"} {
		if err := cl.createNamespace(ns); err != nil {
			return res, err
		}
	}
	if res.create1, err = creates(c, t, base, "bench-c1", 1); err != nil {
		return res, fmt.Errorf("creates, 1 client: %w", err)
	}
	if res.create8, err = creates(c, t, base, "bench-c8", 8); err != nil {
		return res, fmt.Errorf("creates, 8 clients: %w", err)
	}
	if res.list, err = lists(c, cl, "bench-c1"); err != nil {
		return res, fmt.Errorf("LIST: %w", err)
	}
	if res.watchP50, res.watchP99, err = fanout(c, t, base, cl, "bench-watch"); err != nil {
		return res, fmt.Errorf("watch fan-out: %w", err)
	}
	return res, nil
}

// stop sends SIGTERM to the server it started, waits up to 30 s, then
// sends SIGKILL to it.
func stop(cmd *exec.Cmd, exited chan struct{}) error {
	select {
	case <-exited:
		return fmt.Errorf("the server had exited (%v)", cmd.ProcessState)
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
	}
	cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
	return nil
}

// client is one net/http client over HTTP/2 (TLS verification off).
type client struct {
	base, token string
	tr          *http.Transport
	hc          *http.Client
	lastProto   atomic.Value
}

func newClient(base, token string) *client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     time.Minute,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	c := &client{base: base, token: token, tr: tr, hc: &http.Client{Transport: tr}}
	c.lastProto.Store("")
	return c
}

func (c *client) close() { c.tr.CloseIdleConnections() }

func (c *client) request(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// do sends one request and reads the whole answer within timeout.
func (c *client) do(ctx context.Context, method, path string, body []byte, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	c.lastProto.Store(resp.Proto)
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (c *client) createNamespace(ns string) error {
	body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	status, b, err := c.do(context.Background(), "POST", "/api/v1/namespaces", body, 30*time.Second)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("create namespace %s: status %d: %.300s", ns, status, b)
	}
	return nil
}

func configMap(name string, payload int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"payload":%q}}`, name, strings.Repeat("x", payload))
}

// creates creates c.n ConfigMaps in ns from the given number of clients
// (each its own connection, warmed up first) and returns creates a second.
func creates(c config, t target, base, ns string, clients int) (float64, error) {
	cls := make([]*client, clients)
	for i := range cls {
		cls[i] = newClient(base, t.token)
		defer cls[i].close()
		if status, _, err := cls[i].do(context.Background(), "GET", "/api/v1/namespaces/"+ns, nil, 30*time.Second); err != nil || status != 200 {
			return 0, fmt.Errorf("warm-up GET: status %d, %v", status, err)
		}
	}
	bodies := make([][]byte, c.n)
	for i := range bodies {
		bodies[i] = configMap(fmt.Sprintf("cm-%06d", i), c.payload)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, cl := range cls {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= c.n {
					return
				}
				status, b, err := cl.do(ctx, "POST", "/api/v1/namespaces/"+ns+"/configmaps", bodies[i], 30*time.Second)
				if err == nil && status != http.StatusCreated {
					err = fmt.Errorf("status %d: %.300s", status, b)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, firstErr
	}
	if ctx.Err() != nil {
		return 0, errors.New("not done within 5 minutes")
	}
	return float64(c.n) / elapsed.Seconds(), nil
}

// lists GETs the collection once to warm up, then c.listReps times, and
// returns the median time to the last byte. It checks the item count.
func lists(c config, cl *client, ns string) (time.Duration, error) {
	var times []float64
	for i := range c.listReps + 1 {
		start := time.Now()
		status, b, err := cl.do(context.Background(), "GET", "/api/v1/namespaces/"+ns+"/configmaps", nil, time.Minute)
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if status != 200 {
			return 0, fmt.Errorf("status %d: %.300s", status, b)
		}
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return 0, err
		}
		if len(l.Items) != c.n {
			return 0, fmt.Errorf("%d items, want %d", len(l.Items), c.n)
		}
		if i > 0 {
			times = append(times, float64(d))
		}
	}
	return time.Duration(median(times)), nil
}

// fanout opens c.watchers watches on ns's ConfigMaps over one client, makes
// one warm-up write that every watcher must see, then c.watchWrites writes,
// one at a time, and returns the p50 and p99 of the time from sending a
// write to a watcher decoding its event, over all watchers and writes.
func fanout(c config, t target, base string, cl *client, ns string) (p50, p99 time.Duration, err error) {
	status, b, err := cl.do(context.Background(), "GET", "/api/v1/namespaces/"+ns+"/configmaps", nil, 30*time.Second)
	if err != nil || status != 200 {
		return 0, 0, fmt.Errorf("list before watching: status %d, %v: %.300s", status, err, b)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return 0, 0, err
	}

	type write struct {
		sent time.Time
		lat  []time.Duration
		got  atomic.Int64
		done chan struct{}
	}
	var mu sync.Mutex
	writes := map[string]*write{}

	wcl := newClient(base, t.token) // the watchers' client
	defer wcl.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streamsEnded atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		cancel()
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(30 * time.Second):
		}
	}()

	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=1&timeoutSeconds=900&resourceVersion=" + l.Metadata.ResourceVersion
	// Open the watches, 32 at a time; a 429 (kube-apiserver's flow control) is retried.
	sem := make(chan struct{}, 32)
	openErr := make(chan error, 1)
	setupDeadline := time.Now().Add(3 * time.Minute)
	for w := range c.watchers {
		sem <- struct{}{}
		select {
		case err := <-openErr:
			return 0, 0, err
		default:
		}
		if time.Now().After(setupDeadline) {
			return 0, 0, errors.New("the watches were not open within 3 minutes")
		}
		wg.Go(func() {
			var resp *http.Response
			for try := 0; ; try++ {
				req, err := wcl.request(ctx, "GET", path, nil)
				if err != nil {
					<-sem
					trySend(openErr, err)
					return
				}
				resp, err = wcl.hc.Do(req)
				if err == nil && resp.StatusCode == http.StatusOK {
					break
				}
				if err == nil {
					b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
					resp.Body.Close()
					if resp.StatusCode == http.StatusTooManyRequests && try < 50 {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					err = fmt.Errorf("watch %d: status %d: %s", w, resp.StatusCode, b)
				}
				<-sem
				trySend(openErr, err)
				return
			}
			<-sem
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			for {
				var ev struct {
					Type   string `json:"type"`
					Object struct {
						Metadata struct {
							Name string `json:"name"`
						} `json:"metadata"`
					} `json:"object"`
				}
				if err := dec.Decode(&ev); err != nil {
					streamsEnded.Add(1)
					return
				}
				now := time.Now()
				if ev.Type != "ADDED" {
					continue
				}
				mu.Lock()
				wr := writes[ev.Object.Metadata.Name]
				mu.Unlock()
				if wr == nil {
					continue
				}
				wr.lat[w] = now.Sub(wr.sent)
				if wr.got.Add(1) == int64(c.watchers) {
					close(wr.done)
				}
			}
		})
	}
	// Wait for the last openings.
	for range cap(sem) {
		sem <- struct{}{}
	}
	select {
	case err := <-openErr:
		return 0, 0, err
	default:
	}

	wrcl := newClient(base, t.token) // the writer's client
	defer wrcl.close()
	var all []float64
	for i := range c.watchWrites + 1 {
		name := fmt.Sprintf("w-%03d", i)
		wr := &write{lat: make([]time.Duration, c.watchers), done: make(chan struct{})}
		body := configMap(name, c.payload)
		mu.Lock()
		writes[name] = wr
		wr.sent = time.Now()
		mu.Unlock()
		status, b, err := wrcl.do(context.Background(), "POST", "/api/v1/namespaces/"+ns+"/configmaps", body, 30*time.Second)
		if err != nil {
			return 0, 0, err
		}
		if status != http.StatusCreated {
			return 0, 0, fmt.Errorf("write %s: status %d: %.300s", name, status, b)
		}
		select {
		case <-wr.done:
		case <-time.After(time.Minute):
			return 0, 0, fmt.Errorf("write %s reached %d of %d watchers within a minute (%d streams ended)", name, wr.got.Load(), c.watchers, streamsEnded.Load())
		}
		if i > 0 { // the first write is the warm-up: it shows that every watch is open
			for _, d := range wr.lat {
				all = append(all, float64(d))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(all)
	return time.Duration(percentile(all, 0.50)), time.Duration(percentile(all, 0.99)), nil
}

func trySend(ch chan error, err error) {
	select {
	case ch <- err:
	default:
	}
}

// percentile returns the nearest-rank percentile of sorted v.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// treeRSS returns the resident memory of pid and its descendants, in bytes.
func treeRSS(pid int) int64 {
	var total int64
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 && len(seen) < 1000 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p)); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
					kb, _ := strconv.ParseInt(f[1], 10, 64)
					total += kb * 1024
				}
			}
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return total
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortPair returns a port p such that p and p+1 are free (the embedded
// etcd's client and peer ports).
func freePortPair() (int, error) {
	for range 50 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if p >= 65535 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, errors.New("no two consecutive free ports in 50 tries")
}

// writeSAKey writes an RSA key as the oracle's wrapper would generate it.
func writeSAKey(path string) error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600)
}

func copyFile(src, dst string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func fmtMS(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.2f ms", ms)
	}
}

func fmtMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func fmtCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
