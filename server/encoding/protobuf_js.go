//go:build js

package encoding

import "errors"

// In the browser nothing speaks protobuf (see protobuf.go), so the k8s.io/api
// types it needs are left out of the WebAssembly build: protobuf is neither
// read nor negotiated, though the 406 and 415 messages name it as
// kube-apiserver's do.

// ProtobufServed says whether this build reads and writes protobuf.
const ProtobufServed = false

var errNoProtobuf = errors.New("protobuf is not supported in the browser build: send JSON or YAML")

func decodeProtobuf([]byte) (map[string]any, error) { return nil, errNoProtobuf }

// HasProtobuf reports whether objects of apiVersion and kind have a
// protobuf form: none here.
func HasProtobuf(apiVersion, kind string) bool { return false }

func encodeProtobuf(any) ([]byte, bool, error) { return nil, false, nil }

// WatchEventProtobuf is never called: protobuf is never negotiated here.
func WatchEventProtobuf(string, []byte) ([]byte, error) { return nil, errNoProtobuf }
