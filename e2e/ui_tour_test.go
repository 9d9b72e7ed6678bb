package e2e_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_tour opens every page of the UI natively, in a desktop window and
// a phone's (browsertest.Tour says what it checks).
func TestUI_tour(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	ctx := browsertest.New(t, 3*time.Minute)
	browsertest.Tour(t, ctx, func(path string) chromedp.Action[chromedp.Void] { return chromedp.Navigate(server + path) }, "/tmp/kubeplay-ui-tour")
}
