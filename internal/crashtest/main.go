// Command crashtest checks that kubeplay loses no acknowledged write when
// it is killed: it starts `kubeplay serve` on a data directory, writes
// ConfigMaps from several clients at once, kills the server with SIGKILL at
// a random moment, starts it again on the same directory, and checks that
// every write the server had answered is there with the resourceVersion it
// answered, and that the writes after the restart get higher ones. It
// repeats that for -cycles cycles.
//
//	go build -o bin/kubeplay . && go run ./internal/crashtest -kubeplay bin/kubeplay -cycles 100
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

func main() {
	bin := flag.String("kubeplay", "bin/kubeplay", "the kubeplay binary")
	cycles := flag.Int("cycles", 100, "kill-and-restart cycles")
	writers := flag.Int("writers", 8, "concurrent writing clients")
	flag.Parse()
	if err := run(*bin, *cycles, *writers); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
}

// acked is a write the server answered: the object's name and the
// resourceVersion it was given.
type acked struct {
	name string
	rv   int64
}

func run(bin string, cycles, writers int) error {
	dir, err := os.MkdirTemp("", "kubeplay-crashtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var all []acked
	var highest int64
	start := time.Now()
	for cycle := range cycles {
		srv, base, err := startServer(bin, dir)
		if err != nil {
			return fmt.Errorf("cycle %d: %w", cycle, err)
		}
		// Everything acknowledged before is there, unchanged.
		stored, err := list(base)
		if err != nil {
			srv.Process.Kill()
			return fmt.Errorf("cycle %d: %w", cycle, err)
		}
		for _, a := range all {
			if rv, ok := stored[a.name]; !ok || rv != a.rv {
				srv.Process.Kill()
				return fmt.Errorf("cycle %d: %s acknowledged with rv %d, found: %v (rv %d)", cycle, a.name, a.rv, ok, rv)
			}
		}
		got := write(base, cycle, writers, time.Duration(50+rand.IntN(450))*time.Millisecond, srv)
		srv.Wait()
		for _, a := range got {
			if a.rv <= highest {
				return fmt.Errorf("cycle %d: %s got rv %d, not above %d acknowledged before the restart", cycle, a.name, a.rv, highest)
			}
		}
		for _, a := range got {
			highest = max(highest, a.rv)
		}
		all = append(all, got...)
		fmt.Printf("cycle %d: %d writes acknowledged before the kill (%d in all, highest rv %d)\n", cycle+1, len(got), len(all), highest)
	}
	fmt.Printf("%d passed, 0 failed: %d cycles, %d acknowledged writes all kept, in %v\n", cycles, cycles, len(all), time.Since(start).Round(time.Second))
	return nil
}

// startServer starts kubeplay on dir and waits until it is ready.
func startServer(bin, dir string) (*exec.Cmd, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data", dir)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd, base, nil
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", errors.New("the server did not become ready within a minute")
}

// write creates ConfigMaps from n clients until the server is killed
// after killAfter, and returns the creates it acknowledged.
func write(base string, cycle, n int, killAfter time.Duration, srv *exec.Cmd) []acked {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []acked
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("c%d-w%d-%d", cycle, w, i)
				rv, err := create(base, name)
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				got = append(got, acked{name, rv})
				mu.Unlock()
			}
		})
	}
	time.Sleep(killAfter)
	srv.Process.Signal(os.Kill)
	wg.Wait()
	return got
}

type objectMeta struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func create(base, name string) (int64, error) {
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": name}, "data": map[string]string{"k": name}})
	resp, err := http.Post(base+"/api/v1/namespaces/default/configmaps", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	return decodeRV(resp, http.StatusCreated)
}

// list returns the resourceVersion of every ConfigMap in default, by name.
func list(base string) (map[string]int64, error) {
	resp, err := http.Get(base + "/api/v1/namespaces/default/configmaps")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var l struct {
		Items []objectMeta `json:"items"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list: status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(l.Items))
	for _, it := range l.Items {
		rv, err := strconv.ParseInt(it.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			return nil, err
		}
		out[it.Metadata.Name] = rv
	}
	return out, nil
}

func decodeRV(resp *http.Response, want int) (int64, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != want {
		return 0, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var o objectMeta
	if err := json.Unmarshal(b, &o); err != nil {
		return 0, err
	}
	return strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
}
