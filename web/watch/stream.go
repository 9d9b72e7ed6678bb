package watch

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"kubeplay/internal/handlertransport"
)

// event is one watch event as the API streams it.
type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// openWatch starts the watch request path (with query) against api and
// returns its status code, and a decoder of its events when the code is 200;
// otherwise the body (a Status) is in errBody. The watch ends when ctx does.
func openWatch(ctx context.Context, api http.Handler, path string) (code int, dec *json.Decoder, errBody []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	res, err := handlertransport.Transport{Handler: api}.RoundTrip(req)
	if err != nil {
		return 0, nil, nil, err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return res.StatusCode, nil, body, nil
	}
	// The body, and the watch, end with ctx.
	return res.StatusCode, json.NewDecoder(res.Body), nil, nil
}

// statusMessage is a Status body as "Reason (code): message".
func statusMessage(code int, body []byte) string {
	var st struct {
		Reason, Message string
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Reason + " (" + strconv.Itoa(code) + "): " + st.Message
	}
	return strconv.Itoa(code) + ": " + string(body)
}
