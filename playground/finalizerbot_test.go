package playground_test

import (
	"testing"
	"time"

	"kubeplay/playground"
	"kubeplay/store"
)

// TestFinalizerBot: the bot removes its finalizer once its delay has passed
// on the sandbox's clock, which a scenario advances instead of waiting.
func TestFinalizerBot(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := playground.Open(t.Context(), playground.Options{Store: st,
		Controllers: playground.Controllers{FinalizerBots: []playground.FinalizerBot{{Finalizer: "example.com/cleanup", Delay: time.Hour}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	h := sb.Handler()
	createCM(t, h, "default", "held", `"finalizers":["example.com/cleanup","example.com/other"]`)
	createCM(t, h, "default", "bot", `"finalizers":["example.com/cleanup"]`)
	mustDo(t, h, 200, "DELETE", cmPath("default", "held"), "")
	mustDo(t, h, 200, "DELETE", cmPath("default", "bot"), "")
	time.Sleep(200 * time.Millisecond)                     // the bot waits an hour: Idle never holds
	mustDo(t, h, 200, "GET", cmPath("default", "bot"), "") // an hour to go

	before := time.Now()
	sb.AdvanceClock(time.Hour)
	if off := sb.Clock().Offset(); off != time.Hour || sb.Clock().Now().Before(before.Add(time.Hour)) {
		t.Errorf("clock offset %v, now %v", off, sb.Clock().Now())
	}
	waitFor(t, "the bot to remove its finalizer", gone(t, h, cmPath("default", "bot")))
	waitFor(t, "the bot's finalizer off held, the other kept", func() bool {
		held := mustDo(t, h, 200, "GET", cmPath("default", "held"), "")
		return jsonOf(held["metadata"].(map[string]any)["finalizers"]) == `["example.com/other"]`
	})
	// Timestamps the API server writes follow the sandbox's clock.
	created := createCM(t, h, "default", "later", "")
	ts, _ := time.Parse(time.RFC3339, created["metadata"].(map[string]any)["creationTimestamp"].(string))
	if ts.Before(before.Add(time.Hour - time.Second)) {
		t.Errorf("creationTimestamp %v after advancing the clock an hour from %v", ts, before)
	}
}
