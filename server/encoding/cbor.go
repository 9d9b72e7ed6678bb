package encoding

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/fxamacker/cbor/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

// CBOR media types, served when the request carries WithCBOR (the
// CBORServingAndStorage feature gate).
const (
	CBOR = "application/cbor"
	// CBORSeq is the Content-Type of a watch asked for in CBOR: a sequence
	// of self-described CBOR events (RFC 8742).
	CBORSeq = "application/cbor-seq"
	// ApplyPatchCBOR is a Server-Side Apply configuration in CBOR.
	ApplyPatchCBOR = "application/apply-patch+cbor"
)

// selfDescribed is the head of CBOR tag 55799, with which kube-apiserver
// starts every CBOR object it writes (RFC 8949 §3.4.6): it marks the bytes
// as CBOR without changing their meaning.
var selfDescribed = []byte{0xd9, 0xd9, 0xf7}

type cborKey struct{}

// WithCBOR marks a request as one whose answer and body may be CBOR: with
// the CBORServingAndStorage gate on, kube-apiserver serves CBOR for its
// resources (objects, lists, their Status errors) and resource discovery,
// but not for the requests it answers before finding the resource.
func WithCBOR(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), cborKey{}, true))
}

// CBORServed reports whether r was marked WithCBOR.
func CBORServed(r *http.Request) bool {
	on, _ := r.Context().Value(cborKey{}).(bool)
	return on
}

// JSONToCBOR transcodes JSON as kube-apiserver encodes the same data: the
// self-described tag, strings as byte strings, map keys in bytewise order
// (kube-apiserver shuffles them: every order is as right), integers as
// integers, other numbers as the shortest float that keeps their value,
// and the bytes fields of built-in kinds as bytes (byteStrings).
func JSONToCBOR(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v = fieldmanager.PlainNumbers(v) // as kube-apiserver holds them: int64 or float64
	if obj, ok := v.(map[string]any); ok {
		byteStrings(obj)
	}
	out, err := direct.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(selfDescribed), out...), nil
}

// byteStrings gives the strings of obj that its kind holds as bytes
// (base64 in JSON) the CBOR form of kube-apiserver's []byte fields: a
// byte string of the bytes, tagged as expected to be shown in base64 (tag
// 22), which direct.Marshal writes for a []byte. Only built-in kinds (and
// their lists) have schemas here: kube-apiserver encodes custom objects
// from their unstructured form, as they are. (No built-in type has a
// float field: numbers need no schema.)
func byteStrings(obj map[string]any) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	defs, err := fieldmanager.Definitions()
	if err != nil {
		return
	}
	b, err := builtinBytes()
	if err != nil {
		return
	}
	if def, ok := defs[schema.FromAPIVersionAndKind(apiVersion, kind)]; ok {
		b.Map(def, obj, func(s string) any {
			if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
				return raw
			}
			return s
		})
	}
}

// builtinBytes finds the bytes of the built-in types.
var builtinBytes = sync.OnceValues(func() (*typed.Bytes, error) {
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		return nil, err
	}
	return typed.NewBytes(schemas), nil
})

// CBORToJSON transcodes a CBOR map (with or without the self-described
// tag) to JSON, which the rest of a request's decoding reads; the error is
// the decoder's, as kube-apiserver quotes it for an apply configuration.
// Bytes need no schema on the way in: kube-apiserver reads an untagged byte
// string into a field of bytes as their base64 text, as JSON has it, and
// the decoder gives a byte string tagged for base64 as that text.
func CBORToJSON(b []byte) ([]byte, error) {
	var m map[string]any
	if err := direct.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// CBORObjectToJSON is CBORToJSON for an object, whose apiVersion and kind
// kube-apiserver reads first: the error for a body that is no map names
// TypeMeta, as it does.
func CBORObjectToJSON(b []byte) ([]byte, error) {
	var v any
	if err := direct.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		// Decoded into TypeMeta only for the error naming it: the decoder
		// refuses a map's unknown fields there.
		return nil, direct.Unmarshal(b, &metav1.TypeMeta{})
	}
	return json.Marshal(v)
}

// WatchEventCBOR is one event of a watch in CBOR: a self-described map of
// type and object, the object itself self-described CBOR, as kube-apiserver
// nests them.
func WatchEventCBOR(eventType string, object []byte) ([]byte, error) {
	out, err := direct.Marshal(map[string]any{"type": eventType, "object": cbor.RawMessage(object)})
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(selfDescribed), out...), nil
}

// CBORUnknownField is kube-apiserver's complaint about the unknown fields
// of a CBOR object, given their paths as typed.Result has them
// ("spec.containers[0].foo"): its decoder names the first one in the
// order of the body, by its index in its map only. It returns "" when
// none of them is in body.
func CBORUnknownField(body []byte, unknown []string) string {
	if len(unknown) == 0 {
		return ""
	}
	index := -1
	firstUnknown(body, "", func(path string) bool { return slices.Contains(unknown, path) }, &index)
	if index < 0 {
		return ""
	}
	return fmt.Sprintf("cbor: found unknown field at map element index %d", index)
}

// firstUnknown walks the data item at the start of b in the order of its
// bytes, setting index to the position in its map of the first key whose
// path is unknown. It returns the item's length, or -1 once the key is
// found or b is not well-formed CBOR (direct.Unmarshal accepted it
// already, so that does not happen).
func firstUnknown(b []byte, path string, unknown func(string) bool, index *int) int {
	if len(b) == 0 {
		return -1
	}
	major, info, head := b[0]>>5, b[0]&0x1f, 1
	var arg uint64
	switch {
	case info < 24:
		arg = uint64(info)
	case info <= 27 && len(b) > 1<<(info-24):
		for _, c := range b[1 : 1+1<<(info-24)] {
			arg = arg<<8 | uint64(c)
		}
		head += 1 << (info - 24)
	default:
		return -1 // indefinite lengths are refused by the decoder
	}
	switch major {
	case 0, 1, 7:
		return head
	case 2, 3:
		if arg > uint64(len(b)-head) {
			return -1
		}
		return head + int(arg)
	case 6:
		n := firstUnknown(b[head:], path, unknown, index)
		if n < 0 {
			return -1
		}
		return head + n
	}
	n := head
	for i := range arg {
		if major == 5 {
			kn := firstUnknown(b[n:], "", func(string) bool { return false }, index)
			if kn < 0 {
				return -1
			}
			var key string
			if direct.Unmarshal(b[n:n+kn], &key) != nil {
				return -1
			}
			n += kn
			child := key
			if path != "" {
				child = path + "." + key
			}
			if unknown(child) {
				*index = int(i)
				return -1
			}
			vn := firstUnknown(b[n:], child, unknown, index)
			if vn < 0 {
				return -1
			}
			n += vn
			continue
		}
		vn := firstUnknown(b[n:], path+"["+strconv.FormatUint(i, 10)+"]", unknown, index)
		if vn < 0 {
			return -1
		}
		n += vn
	}
	return n
}
