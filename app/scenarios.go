package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"kubeplay/playground"
	"kubeplay/playground/scenario"
)

// runScenarios is `kubeplay run`: each scenario (a file, or builtin:NAME)
// in a fresh in-process sandbox, or against --server; it fails if any
// expectation does.
func runScenarios(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "run against this Kubernetes API instead of a fresh in-process sandbox")
	token := fs.String("token", "", "with --server, the bearer token to send")
	insecure := fs.Bool("insecure-skip-tls-verify", false, "with --server, do not verify its certificate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("run: name scenario files (or builtin:NAME, builtin:all)")
	}
	var all []*scenario.Scenario
	for _, arg := range fs.Args() {
		scs, err := loadScenarios(arg)
		if err != nil {
			return err
		}
		all = append(all, scs...)
	}
	failed := 0
	for _, sc := range all {
		fmt.Fprintf(stdout, "%s\n", sc.Name)
		target, done, err := scenarioTarget(ctx, *server, *token, *insecure)
		if err != nil {
			return err
		}
		ok, err := scenario.Run(ctx, sc, target, scenario.Printer(stdout))
		done()
		switch {
		case errors.Is(err, scenario.ErrNeedsSandbox):
			fmt.Fprintf(stdout, "  - skipped: %v\n", err)
		case err != nil:
			return err
		case !ok:
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d scenarios failed", failed, len(all))
	}
	return nil
}

func loadScenarios(arg string) ([]*scenario.Scenario, error) {
	if name, ok := strings.CutPrefix(arg, "builtin:"); ok {
		builtin, err := scenario.Builtin()
		if err != nil {
			return nil, err
		}
		var out []*scenario.Scenario
		for _, sc := range builtin {
			if name == "all" || sc.Name == name {
				out = append(out, sc)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no built-in scenario %q", name)
		}
		return out, nil
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return []*scenario.Scenario{sc}, nil
}

// scenarioTarget is --server, or a new in-memory sandbox served in
// process; done releases it.
func scenarioTarget(ctx context.Context, server, token string, insecure bool) (scenario.Target, func(), error) {
	if server != "" {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		}
		t := scenario.Target{Server: strings.TrimSuffix(server, "/"), Token: token, Client: &http.Client{Transport: tr}}
		remoteSandbox(&t)
		return t, func() {}, nil
	}
	m, err := playground.NewManager(playground.ManagerOptions{InMemory: true, Limits: playground.Limits{RequestsPerSecond: -1}})
	if err != nil {
		return scenario.Target{}, nil, err
	}
	ms, err := m.Create(ctx, playground.CreateOptions{})
	if err != nil {
		m.Close()
		return scenario.Target{}, nil, err
	}
	return scenario.SandboxTarget(ms), func() { m.Close() }, nil
}

// remoteSandbox lets a scenario advance the clock, compact the history and
// switch the controllers of a sandbox of a kubeplay server (a server URL ending in /sandboxes/<id>),
// through its playground API.
func remoteSandbox(t *scenario.Target) {
	base, id, ok := strings.Cut(t.Server, "/sandboxes/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return
	}
	call := func(method, what, body string) error {
		req, err := http.NewRequest(method, base+"/playground/v1/sandboxes/"+id+"/"+what, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if t.Token != "" {
			req.Header.Set("Authorization", "Bearer "+t.Token)
		}
		resp, err := t.Client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("%s: %d %s", what, resp.StatusCode, b)
		}
		return nil
	}
	t.AdvanceClock = func(d time.Duration) error { return call("POST", "clock", fmt.Sprintf(`{"advance":%q}`, d.String())) }
	t.Compact = func() error { return call("POST", "compact", "") }
	t.SetControllers = func(a scenario.ControllerAction) error {
		b, _ := json.Marshal(map[string]any{"controllers": a.Switches, "finalizerBots": a.FinalizerBots})
		return call("PATCH", "settings", string(b))
	}
	t.SetEmulatedVersion = func(v string) error {
		b, _ := json.Marshal(map[string]any{"emulatedVersion": v})
		return call("PATCH", "settings", string(b))
	}
}
