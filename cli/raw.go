package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

func isMethod(w string) bool { return methods[w] }

// raw sends "METHOD PATH" with the file as the body (JSON or YAML, sent as
// is; a PATCH's content type follows the body: merge patch for an object,
// JSON patch for an array) and prints the status line, the server's
// warnings and the answer.
func (c *Console) raw(ctx context.Context, words []string, file string, out io.Writer) error {
	if len(words) != 2 || !strings.HasPrefix(words[1], "/") {
		return usageError("a raw request is METHOD /path, such as: GET /api/v1/namespaces")
	}
	method, path := words[0], words[1]
	var body []byte
	ct := ""
	if b := strings.TrimSpace(file); b != "" && method != "GET" && method != "HEAD" {
		body = []byte(b)
		ct = "application/json"
		if !json.Valid(body) {
			ct = "application/yaml"
		}
		if method == "PATCH" {
			ct = "application/merge-patch+json"
			if strings.HasPrefix(b, "[") {
				ct = "application/json-patch+json"
			}
		}
	}
	res, err := c.do(ctx, method, path, ct, body, "application/json, */*")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	fmt.Fprintf(out, "HTTP %s\n", res.Status)
	for _, w := range res.Header.Values("Warning") {
		fmt.Fprintf(out, "Warning: %s\n", warningText(w))
	}
	if strings.Contains(path, "watch=") {
		_, err := io.Copy(out, res.Body) // events as they come
		return err
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, data, "", "  ") == nil {
		data = pretty.Bytes()
	}
	if len(data) > 0 {
		fmt.Fprintf(out, "%s\n", bytes.TrimRight(data, "\n"))
	}
	return nil
}

// warningText is the text of a Warning header ("299 - \"text\""), as
// kubectl prints it.
func warningText(h string) string {
	_, rest, ok := strings.Cut(h, " - ")
	if !ok {
		return h
	}
	if t, err := strconv.Unquote(rest); err == nil {
		return t
	}
	return rest
}
