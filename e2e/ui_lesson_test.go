package e2e_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_lesson walks a learner's first lesson in headless Chromium, from
// the start page through the managed fields and history it leads to.
func TestUI_lesson(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	ctx := browsertest.New(t, 3*time.Minute)
	do(t, ctx, chromedp.Navigate(server+"/"), chromedp.WaitVisible(`.start-lessons`))
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-start.png")
	browsertest.WalkLesson(t, ctx, "/tmp/kubeplay-ui")
}
