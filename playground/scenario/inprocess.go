package scenario

import (
	"context"
	"net/http"
	"time"

	"kubeplay/internal/handlertransport"
	"kubeplay/playground"
	"kubeplay/server/releases"
)

// SandboxTarget runs scenarios in ms, in process (with its token, in
// hosted mode).
func SandboxTarget(ms *playground.Managed) Target {
	return Target{Server: "http://sandbox", Client: HandlerClient(ms.Handler()), Token: ms.Token(),
		AdvanceClock: func(d time.Duration) error { return ms.AdvanceClock(context.Background(), d) },
		Compact: func() error {
			_, err := ms.Compact(context.Background())
			return err
		},
		SetControllers: func(a ControllerAction) error {
			c, err := a.Switches.Apply(ms.Controllers())
			if err != nil {
				return err
			}
			if a.FinalizerBots != nil {
				c.FinalizerBots = nil
				for _, b := range *a.FinalizerBots {
					d, _ := time.ParseDuration(b.Delay) // checked by Parse
					c.FinalizerBots = append(c.FinalizerBots, playground.FinalizerBot{Finalizer: b.Finalizer, Delay: d})
				}
			}
			ms.SetControllers(c)
			return nil
		},
		SetEmulatedVersion: func(v string) error {
			minor, err := releases.Parse(v)
			if err != nil {
				return err
			}
			return ms.SetVersion(minor)
		}}
}

// HandlerClient returns an HTTP client whose requests h serves in process,
// streaming included (a watch's events arrive as h writes them), so that a
// scenario runs against a sandbox without a network round trip.
func HandlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: handlertransport.Transport{Handler: h}}
}
