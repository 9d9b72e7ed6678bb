package explorer_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"kubeplay/web/explorer"
	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
)

func TestHandler_Age(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/nodes", http.StatusOK, fakeapi.List("NodeList", "v1", "9",
		fakeapi.Object("", "fresh", "2026-03-01T11:59:30Z"),
		fakeapi.Object("", "minutes", "2026-03-01T11:55:00Z"),
		fakeapi.Object("", "hours", "2026-03-01T09:30:00Z"),
		fakeapi.Object("", "days", "2026-02-26T12:00:00Z"),
		fakeapi.Object("", "years", "2023-01-01T00:00:00Z"),
		fakeapi.Object("", "future", "2026-03-01T13:00:00Z"),
		map[string]any{"metadata": map[string]any{"name": "unset"}},
	))
	h := explorer.New(api, func() time.Time { return now })

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/?r=v1/nodes", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	doc := htmltest.Parse(t, rec.Body)
	var got []string
	for _, tr := range doc.One(t, "table", "class", "objects").One(t, "tbody").All("tr") {
		cells := htmltest.Texts(tr.All("td"))
		got = append(got, cells[0]+"="+cells[1])
	}
	want := []string{"fresh=30s", "minutes=5m", "hours=150m", "days=3d", "years=3y60d", "future=<invalid>", "unset=<unknown>"}
	if !slices.Equal(got, want) {
		t.Errorf("ages %q, want %q", got, want)
	}
}
