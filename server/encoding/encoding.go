package encoding

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Media types the server reads and writes.
const (
	JSON     = "application/json"
	YAML     = "application/yaml"
	Protobuf = "application/vnd.kubernetes.protobuf"
)

// BodyMediaType returns the media type of r's body, or an
// UnsupportedMediaType Status: JSON, YAML, protobuf (for built-in resources;
// the browser build then refuses it as it decodes), CBOR when r was marked
// WithCBOR.
func BodyMediaType(r *http.Request) (string, error) {
	contentType := r.Header.Get("Content-Type")
	if contentType == "" {
		return JSON, nil
	}
	cbor := CBORServed(r)
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil && (mt == JSON || mt == YAML || mt == Protobuf && !customResource(r) || mt == CBOR && cbor) {
		return mt, nil
	}
	accepted := JSON + ", " + YAML
	// kube-apiserver's CRD handler names protobuf too, then panics on a
	// custom object sent in it (the client sees its connection reset):
	// kubeplay refuses it, naming the types it reads.
	if mt != Protobuf {
		accepted += ", " + Protobuf
	}
	if cbor {
		accepted += ", " + CBOR
	}
	return "", &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + accepted,
	}}
}

// YAMLDuplicateKeys are the complaints of a strict YAML decoder about the
// keys a YAML body gives twice in a mapping (`line 7: key "a" already set
// in map`), which kube-apiserver reports as its fieldValidation says.
type YAMLDuplicateKeys []string

// Error is the strict decoder's error, as it words it.
func (d YAMLDuplicateKeys) Error() string {
	return "yaml: unmarshal errors:\n  " + strings.Join(d, "\n  ")
}

// YAMLDuplicates are the keys body gives twice. A body that is not YAML
// has none: the decoder proper says what is wrong with it.
func YAMLDuplicates(body []byte) YAMLDuplicateKeys {
	var unmarshal *yamlv2.TypeError
	if _, err := yaml.YAMLToJSONStrict(body); errors.As(err, &unmarshal) {
		return unmarshal.Errors
	}
	return nil
}

// DecodeObject parses a JSON, YAML, CBOR or protobuf body into an object.
// The error is the cause only; callers wrap it in the Status the real
// server gives.
func DecodeObject(mediaType string, body []byte) (map[string]any, error) {
	switch mediaType {
	case Protobuf:
		return decodeProtobuf(body)
	case CBOR:
		j, err := CBORObjectToJSON(body)
		if err != nil {
			return nil, err
		}
		body = j
	}
	if mediaType == YAML {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, &YAMLSyntaxError{Err: err}
		}
		body = j
	}
	if _, _, err := TypeMeta(body); err != nil {
		return nil, err
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// TypeMeta reads the apiVersion and kind of body, a JSON object, failing
// as DecodeObject does for JSON that is not one. kube-apiserver reads them
// first: its error for a body that is no object names this struct.
func TypeMeta(body []byte) (apiVersion, kind string, err error) {
	var typeMeta struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(body, &typeMeta); err != nil {
		return "", "", err
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		return "", "", errors.New("object is null")
	}
	return typeMeta.APIVersion, typeMeta.Kind, nil
}

// YAMLSyntaxError is a YAML body that does not parse: kube-apiserver reports
// it without the "couldn't get version/kind" of other decoding errors.
type YAMLSyntaxError struct{ Err error }

func (e *YAMLSyntaxError) Error() string { return e.Err.Error() }

// ResponseMediaType is the media type of a response: the negotiated one,
// JSON when nothing served is acceptable (errors, including 406, are then
// written as JSON).
func ResponseMediaType(r *http.Request) string {
	n, err := Negotiate(r, false, conversions...)
	if err != nil {
		return JSON
	}
	return n.MediaType
}

// metadataOrder is the order of ObjectMeta's fields in kube-apiserver's JSON.
var metadataOrder = []string{
	"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields",
}

// topOrder puts these first; other top-level fields follow in name order.
var topOrder = []string{"kind", "apiVersion", "metadata"}

// MarshalObject encodes an object as JSON with the field order of the real
// server's typed objects where it is known: kind, apiVersion, metadata (in
// ObjectMeta order), then the rest by name.
func MarshalObject(obj map[string]any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeOrdered(&b, obj, topOrder, func(key string, v any) error {
		if m, ok := v.(map[string]any); ok && key == "metadata" {
			return writeOrdered(&b, m, metadataOrder, func(key string, v any) error {
				if entries, ok := v.([]any); ok && key == "managedFields" {
					return writeManagedFields(&b, entries)
				}
				return writeValue(&b, v)
			})
		}
		return writeValue(&b, v)
	}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Ordered is an object that, inside another value (a list's items), is
// encoded as MarshalObject encodes it.
type Ordered map[string]any

// MarshalJSON implements json.Marshaler.
func (o Ordered) MarshalJSON() ([]byte, error) { return MarshalObject(o) }

// writeOrdered writes m with the keys of first it has first, in that
// order, then the others sorted, each value by write (writeValue if nil).
func writeOrdered(b *bytes.Buffer, m map[string]any, first []string, write func(string, any) error) error {
	keys := make([]string, 0, len(m))
	for _, k := range first {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	firsts := len(keys)
	for k := range m {
		if !slices.Contains(first, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys[firsts:])
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		var err error
		if write != nil {
			err = write(k, m[k])
		} else {
			err = writeValue(b, m[k])
		}
		if err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// managedFieldsOrder is the order of a ManagedFieldsEntry's fields in
// kube-apiserver's JSON.
var managedFieldsOrder = []string{"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}

// writeManagedFields writes metadata.managedFields, each entry's fields in
// managedFieldsOrder.
func writeManagedFields(b *bytes.Buffer, entries []any) error {
	b.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		var err error
		if m, ok := e.(map[string]any); ok {
			err = writeOrdered(b, m, managedFieldsOrder, nil)
		} else {
			err = writeValue(b, e)
		}
		if err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// Marshal encodes any value as compact JSON the way the server writes it
// (HTML characters escaped, as kube-apiserver's serializer does).
func Marshal(v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok {
		return MarshalObject(m)
	}
	var b bytes.Buffer
	if err := writeValue(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write sends v with status code in the negotiated media type.
func Write(w http.ResponseWriter, r *http.Request, code int, v any) {
	WriteAs(w, r, code, v, ResponseMediaType(r))
}

// WriteAs sends v with status code in media type mt (JSON, YAML, protobuf
// or CBOR). A value that has no protobuf form (a custom object) goes as
// JSON, as kube-apiserver falls back for a client that also takes JSON.
func WriteAs(w http.ResponseWriter, r *http.Request, code int, v any, mt string) {
	var body []byte
	var err error
	if mt == Protobuf {
		var ok bool
		if body, ok, err = encodeProtobuf(v); err == nil && !ok {
			mt = JSON
		}
	}
	if mt != Protobuf {
		body, err = Marshal(v)
	}
	if err != nil {
		WriteError(w, r, apierrors.NewInternalError(err))
		return
	}
	switch {
	case mt == Protobuf:
	case mt == CBOR:
		if body, err = JSONToCBOR(body); err != nil {
			WriteError(w, r, apierrors.NewInternalError(err))
			return
		}
	case mt == YAML:
		if y, err := yaml.JSONToYAML(body); err == nil {
			body = y
		} else {
			mt = JSON
		}
	case Pretty(r):
		var b bytes.Buffer
		json.Indent(&b, body, "", "  ")
		body = b.Bytes() // kube-apiserver ends indented JSON without a newline
	default:
		body = append(body, '\n')
	}
	w.Header().Set("Content-Type", mt)
	// The threshold applies to the encoded object, without the newline that
	// ends a compact JSON body.
	size := len(body)
	if mt != CBOR && mt != Protobuf {
		size = len(bytes.TrimSuffix(body, []byte("\n")))
	}
	if gzipped(w, r, size) {
		var z bytes.Buffer
		zw := newGzip(&z)
		zw.Write(body)
		closeGzip(zw)
		body = z.Bytes()
	}
	w.WriteHeader(code)
	w.Write(body)
}

// gzipped reports whether a body of size bytes is compressed for r's
// client, and if so says so in w's headers.
func gzipped(w http.ResponseWriter, r *http.Request, size int) bool {
	if size < gzipThreshold || !AcceptsGzip(r) {
		return false
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Vary", "Accept-Encoding")
	return true
}

// WriteJSON sends compact JSON that is already encoded, as Write sends
// what it encodes (a newline after it, gzip from the same size) but
// without holding it whole: size is its length, chunks yields it piece by
// piece (a piece may be reused once the next one is asked for).
func WriteJSON(w http.ResponseWriter, r *http.Request, code, size int, chunks iter.Seq[[]byte]) {
	w.Header().Set("Content-Type", JSON)
	var out io.Writer = w
	var zw *gzip.Writer
	if gzipped(w, r, size) {
		zw = newGzip(w)
		out = zw
	}
	w.WriteHeader(code)
	bw := bufio.NewWriterSize(out, min(size+1, 32<<10))
	for c := range chunks {
		if _, err := bw.Write(c); err != nil {
			return // the client is gone
		}
	}
	bw.WriteByte('\n')
	bw.Flush()
	if zw != nil {
		closeGzip(zw)
	}
}

// gzipLevel is kube-apiserver's compression level: the fastest, whose
// answers are at most about 1.5 times larger than the default level's
// (kubernetes/kubernetes#112296).
const gzipLevel = gzip.BestSpeed

// gzipWriters keeps gzip writers (their compressor is large) for reuse.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return zw
}}

func newGzip(w io.Writer) *gzip.Writer {
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(w)
	return zw
}

// closeGzip ends the stream and puts zw back for reuse.
func closeGzip(zw *gzip.Writer) {
	zw.Close()
	zw.Reset(nil)
	gzipWriters.Put(zw)
}

// gzipThreshold is the size from which kube-apiserver compresses a response
// for a client that accepts gzip (smaller ones are not worth the CPU):
// measured on the oracle, a 131,072-byte object plus its newline is
// compressed, one byte less is not.
const gzipThreshold = 128 * 1024

// AcceptsGzip reports whether the client lists a plain "gzip" (kube-apiserver
// ignores "gzip;q=...", "GZIP" and "*").
func AcceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(part) == "gzip" {
			return true
		}
	}
	return false
}

// Pretty reports whether JSON should be indented: on ?pretty=true, and for
// the user agents kube-apiserver indents for (curl, Wget, browsers).
func Pretty(r *http.Request) bool {
	if p := r.URL.Query().Get("pretty"); p != "" {
		on, _ := strconv.ParseBool(p) // as kube-apiserver: "True" and "t" too, "yes" not
		return on
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// StatusOf converts any error into the Status the server answers with.
func StatusOf(err error) metav1.Status {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		st := api.Status()
		st.Kind, st.APIVersion = "Status", "v1"
		return st
	}
	st := apierrors.NewInternalError(err).ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	return st
}

// WriteError sends err as a Status, in the media type kube-apiserver
// writes errors in (statusMediaType).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	st := StatusOf(err)
	WriteAs(w, r, int(st.Code), &st, statusMediaType(r))
}

// BadRequest returns a 400 Status with message.
func BadRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// Gzip wraps w so that a 200 answer's body goes gzip-compressed, as
// kube-apiserver sends its OpenAPI v2 document to a client that accepts it;
// other answers (304, 206, errors) go as they are. done ends the stream.
func Gzip(w http.ResponseWriter) (gw http.ResponseWriter, done func()) {
	g := &gzipResponse{ResponseWriter: w}
	return g, func() {
		if g.zw != nil {
			closeGzip(g.zw)
		}
	}
}

type gzipResponse struct {
	http.ResponseWriter
	zw          *gzip.Writer
	wroteHeader bool
}

func (g *gzipResponse) WriteHeader(code int) {
	if g.wroteHeader {
		return
	}
	g.wroteHeader = true
	if code == http.StatusOK {
		h := g.Header()
		h.Del("Content-Length") // of the uncompressed body
		h.Set("Content-Encoding", "gzip")
		g.zw = newGzip(g.ResponseWriter)
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipResponse) Write(b []byte) (int, error) {
	g.WriteHeader(http.StatusOK)
	if g.zw != nil {
		return g.zw.Write(b)
	}
	return g.ResponseWriter.Write(b)
}
