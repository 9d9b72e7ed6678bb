package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

func isMethod(w string) bool { return methods[w] }

// raw sends "METHOD PATH" with the file as the body (JSON or YAML, sent as
// is; a PATCH's content type follows the body: merge patch for an object,
// JSON patch for an array) and prints the status line and the answer.
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
