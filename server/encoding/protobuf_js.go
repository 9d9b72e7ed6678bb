//go:build js

package encoding

import "errors"

// In the browser nothing sends protobuf (see protobuf.go), so the k8s.io/api
// types that decoding needs are left out of the WebAssembly build.
func decodeProtobuf([]byte) (map[string]any, error) {
	return nil, errors.New("protobuf bodies are not supported in the browser build; send JSON or YAML")
}
