package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"kubeplay/internal/handlertransport"
)

// UserAgent identifies the console's requests in the request log.
const UserAgent = "kubeplay-console"

// Console runs command lines against one API. Safe for concurrent use.
type Console struct {
	// send is an http.Client's Do, or its equal in process (see
	// followRedirects).
	send   func(*http.Request) (*http.Response, error)
	server string // the API's URL, without a trailing slash
	token  string // sent as a bearer token, if set

	mu   sync.Mutex
	disc *discovery // cached after the first command that needs it
}

// New returns a Console whose requests api serves in process.
func New(api http.Handler) *Console {
	rt := handlertransport.Transport{Handler: api}
	return &Console{send: func(req *http.Request) (*http.Response, error) { return followRedirects(rt, req) }, server: "http://kubeplay"}
}

// NewClient returns a Console whose requests go to the API at server (a
// URL, such as a sandbox's .../sandboxes/<id>) through send (an
// http.Client's Do), with token (if set) as a bearer token.
func NewClient(server string, send func(*http.Request) (*http.Response, error), token string) *Console {
	return &Console{send: send, server: strings.TrimSuffix(server, "/"), token: token}
}

// Run runs line (kubectl's syntax, with or without "kubectl" in front; or a
// raw request such as "GET /api/v1/namespaces") with file as the content of
// -f (and the body of a raw request), writing what kubectl would print to
// out. A failing command prints its error as kubectl does ("Error from
// server (NotFound): ...") and returns it. Watches (-w) run until ctx ends.
func (c *Console) Run(ctx context.Context, line, file string, out io.Writer) error {
	err := c.run(ctx, line, file, out)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(out, errorLine(err))
	}
	if ctx.Err() != nil {
		return nil // a watch stopped
	}
	return err
}

func (c *Console) run(ctx context.Context, line, file string, out io.Writer) error {
	words, err := splitWords(line)
	if err != nil {
		return err
	}
	if len(words) > 0 && words[0] == "kubectl" {
		words = words[1:]
	}
	if len(words) == 0 {
		return usageError("type a kubectl command, such as: get namespaces")
	}
	if isMethod(words[0]) {
		return c.raw(ctx, words, file, out)
	}
	cmd, ok := commands[words[0]]
	if !ok {
		return usageError(fmt.Sprintf("unknown command %q for \"kubectl\" (here: %s)", words[0], strings.Join(commandNames(), ", ")))
	}
	f, args, err := parseFlags(words[1:])
	if err != nil {
		return err
	}
	return cmd(c, ctx, f, args, file, out)
}

type command func(c *Console, ctx context.Context, f flags, args []string, file string, out io.Writer) error

var commands = map[string]command{
	"get":           (*Console).get,
	"describe":      (*Console).describe,
	"create":        (*Console).create,
	"apply":         (*Console).apply,
	"delete":        (*Console).delete,
	"patch":         (*Console).patch,
	"label":         (*Console).label,
	"annotate":      (*Console).annotate,
	"scale":         (*Console).scale,
	"run":           (*Console).runPod,
	"explain":       (*Console).explain,
	"api-resources": (*Console).apiResources,
}

func commandNames() []string {
	return []string{"get", "describe", "create", "apply", "delete", "patch", "label", "annotate", "scale", "run", "explain", "api-resources", "GET|POST|PUT|PATCH|DELETE /path"}
}

// usageError is a mistake in the command line, printed as "error: ...".
type usageError string

func (e usageError) Error() string { return string(e) }

// statusError is the API's answer to a failed request.
type statusError struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *statusError) Error() string { return e.Message }

// errorLine formats err as kubectl prints it.
func errorLine(err error) string {
	var st *statusError
	if errors.As(err, &st) {
		reason := st.Reason
		if reason == "" {
			reason = http.StatusText(st.Code)
		}
		return fmt.Sprintf("Error from server (%s): %s", reason, st.Message)
	}
	return "error: " + err.Error()
}

// request sends one request and returns the answer's body, or the API's
// Status as a *statusError for a non-2xx answer.
func (c *Console) request(ctx context.Context, method, path, contentType string, body []byte, accept string) ([]byte, error) {
	res, err := c.do(ctx, method, path, contentType, body, accept)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, decodeStatus(res.StatusCode, data)
	}
	return data, nil
}

func (c *Console) do(ctx context.Context, method, path, contentType string, body []byte, accept string) (*http.Response, error) {
	var r io.Reader = http.NoBody
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, r)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("User-Agent", UserAgent)
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return c.send(req)
}

func decodeStatus(code int, data []byte) error {
	st := &statusError{}
	if json.Unmarshal(data, st) != nil || st.Message == "" {
		st = &statusError{Code: code, Message: strings.TrimSpace(string(data))}
		if st.Message == "" {
			st.Message = "the server answered " + http.StatusText(code)
		}
	}
	if st.Code == 0 {
		st.Code = code
	}
	return st
}

// query builds "?k=v&..." from pairs, leaving out empty values.
func query(pairs ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
