package cli

import (
	"encoding/json"
	"net/http"
)

// Path is where Handler is mounted: outside the Kubernetes API's paths and
// the UI's (/ui/).
const Path = "/kubeplay/console"

// Handler runs one command per request: POST a JSON object {"command":
// "get pods", "file": "..."} and read the output as text/plain, streamed
// (a watch runs until the client goes away). A failed command's output ends
// with its error, as kubectl's does.
func (c *Console) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST a command", http.StatusMethodNotAllowed)
			return
		}
		var in struct {
			Command string `json:"command"`
			File    string `json:"file"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&in); err != nil {
			http.Error(w, "the body must be a JSON object {command, file}: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		c.Run(r.Context(), in.Command, in.File, flushWriter{w})
	})
}

// flushWriter sends each write at once, so a watch's lines show as they come.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	http.NewResponseController(f.w).Flush()
	return n, err
}
