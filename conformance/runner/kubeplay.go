package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// kubeplay is a `kubeplay serve` this program started, on a port of the
// system's choosing, with its data in a directory of its own.
type kubeplay struct {
	cmd  *exec.Cmd
	url  string // http://127.0.0.1:PORT
	data string
	done chan error // the process's exit
}

// servingLine is what serve prints once it listens.
var servingLine = regexp.MustCompile(`kubeplay is serving on (http://\S+)`)

// startKubeplay starts bin serve, logging to logPath, and returns once it
// listens. Each sandbox's limits are lifted: the suite's parallel processes
// make more requests and hold more watches than a playground visitor may,
// and a run may leave a sandbox idle longer than the default expiry.
func startKubeplay(ctx context.Context, bin, logPath string) (*kubeplay, error) {
	data, err := os.MkdirTemp("", "kubeplay-conformance-")
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(data)
		return nil, err
	}
	cmd := exec.Command(bin, "serve",
		"--addr", "127.0.0.1:0",
		"--data", data,
		"--sandbox-requests-per-second=-1",
		"--sandbox-max-watches=-1",
		"--sandbox-max-objects=-1",
		"--sandbox-max-bytes=-1",
		"--sandbox-idle-expiry=-1s",
	)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		os.RemoveAll(data)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		os.RemoveAll(data)
		return nil, err
	}
	k := &kubeplay{cmd: cmd, data: data, done: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		io.Copy(logFile, stdout)
		k.done <- cmd.Wait()
		logFile.Close()
	}()
	select {
	case k.url = <-urls:
		return k, nil
	case err := <-k.done:
		os.RemoveAll(data)
		return nil, fmt.Errorf("kubeplay exited before serving (%v); see %s", err, logPath)
	case <-ctx.Done():
		k.stop()
		return nil, ctx.Err()
	}
}

// stop ends the server (SIGTERM, then SIGKILL if it lingers) and removes
// its data.
func (k *kubeplay) stop() {
	syscall.Kill(-k.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
	os.RemoveAll(k.data)
}

// newSandbox creates a sandbox through the playground API, writes its
// kubeconfig to path and returns its id.
func (k *kubeplay) newSandbox(ctx context.Context, path string) (string, error) {
	// History kept as long as kube-apiserver keeps it: it compacts etcd
	// every 5 minutes, which the chunking test waits for (a sandbox's
	// default, 1h, is for learners looking back).
	body, err := k.call(ctx, http.MethodPost, "/playground/v1/sandboxes", `{"retention":"5m"}`)
	if err != nil {
		return "", err
	}
	var sb struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &sb); err != nil || sb.ID == "" {
		return "", fmt.Errorf("creating a sandbox: unexpected answer %q", body)
	}
	kubeconfig, err := k.call(ctx, http.MethodGet, "/playground/v1/sandboxes/"+sb.ID+"/kubeconfig", "")
	if err != nil {
		return "", err
	}
	return sb.ID, os.WriteFile(path, kubeconfig, 0o600)
}

func (k *kubeplay) deleteSandbox(ctx context.Context, id string) error {
	_, err := k.call(ctx, http.MethodDelete, "/playground/v1/sandboxes/"+id, "")
	return err
}

func (k *kubeplay) call(ctx context.Context, method, path, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, k.url+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}
