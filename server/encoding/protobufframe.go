package encoding

import (
	"encoding/binary"
	"fmt"
)

// ProtobufWatch is the Content-Type of a watch streamed in protobuf.
const ProtobufWatch = Protobuf + ";stream=watch"

// ProtobufFrame frames one protobuf watch event for a chunked stream as
// client-go's length-delimited reader reads it: its length in 4 bytes,
// big-endian, then the event.
func ProtobufFrame(event []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(event)), uint32(len(event))), event...)
}

// MarshalProtobuf encodes a built-in object (a map with its apiVersion and
// kind, or a typed object such as a Status) as kube-apiserver writes it in
// protobuf. An object without a protobuf form is an error.
func MarshalProtobuf(v any) ([]byte, error) {
	b, ok, err := encodeProtobuf(v)
	if err == nil && !ok {
		err = fmt.Errorf("%T has no protobuf form", v)
	}
	return b, err
}
