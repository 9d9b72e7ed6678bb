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
		SetControllers: switchControllers(ms.Controllers, ms.SetControllers),
		SetEmulatedVersion: func(v string) error {
			minor, err := releases.Parse(v)
			if err != nil {
				return err
			}
			return ms.SetVersion(minor)
		}}
}

// Local is a sandbox of this process that LocalTarget runs scenarios in
// (a *playground.Sandbox).
type Local interface {
	Handler() http.Handler
	AdvanceClock(time.Duration)
	Compact(context.Context) (int64, error)
	Controllers() playground.Controllers
	SetControllers(playground.Controllers)
	SetVersion(minor int) error
}

// LocalTarget runs scenarios in sb, in process: the UI's own cluster (the
// root cluster, or the browser tab's).
func LocalTarget(sb Local) Target {
	return Target{Server: "http://sandbox", Client: HandlerClient(sb.Handler()),
		AdvanceClock: func(d time.Duration) error { sb.AdvanceClock(d); return nil },
		Compact: func() error {
			_, err := sb.Compact(context.Background())
			return err
		},
		SetControllers: switchControllers(sb.Controllers, sb.SetControllers),
		SetEmulatedVersion: func(v string) error {
			minor, err := releases.Parse(v)
			if err != nil {
				return err
			}
			return sb.SetVersion(minor)
		}}
}

// switchControllers applies a controller action to the controllers get
// returns, through set.
func switchControllers(get func() playground.Controllers, set func(playground.Controllers)) func(ControllerAction) error {
	return func(a ControllerAction) error {
		c, err := a.Switches.Apply(get())
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
		set(c)
		return nil
	}
}

// HandlerClient returns a Doer whose requests h serves in process,
// streaming included (a watch's events arrive as h writes them), so that a
// scenario runs against a sandbox without a network round trip.
func HandlerClient(h http.Handler) Doer { return handlerDoer{handlertransport.Transport{Handler: h}} }

type handlerDoer struct{ rt handlertransport.Transport }

func (d handlerDoer) Do(req *http.Request) (*http.Response, error) { return d.rt.RoundTrip(req) }
