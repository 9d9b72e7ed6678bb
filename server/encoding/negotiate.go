package encoding

import (
	"cmp"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Conversions a client may ask for with the as, g and v parameters of an
// Accept media type.
const (
	AsTable                      = "Table"
	AsPartialObjectMetadata      = "PartialObjectMetadata"
	AsPartialObjectMetadataList  = "PartialObjectMetadataList"
	metaGroup                    = "meta.k8s.io"
	servedTypes                  = "application/json, application/yaml"
	servedStreamTypes            = ", application/json;stream=watch"
	onlyAcceptedPrefix           = "only the following media types are accepted: "
	notAcceptableRepresentations = "406: Not Acceptable\n\nAvailable representations: "
)

// conversions are all the conversions the server knows.
var conversions = []string{AsTable, AsPartialObjectMetadata, AsPartialObjectMetadataList}

// Acceptable returns the 406 Not Acceptable Status when nothing the server
// serves is acceptable to a client sending this Accept header.
func Acceptable(accept string, collection bool) error {
	_, err := Negotiate(accept, collection, conversions...)
	return err
}

// Negotiated is the representation chosen for a response.
type Negotiated struct {
	// MediaType is JSON or YAML.
	MediaType string
	// As is the conversion asked for (AsTable, ...), empty for the object
	// itself; Version is its meta.k8s.io version (v1 or v1beta1).
	As, Version string
}

// Negotiate picks the representation of a response from an Accept header,
// as kube-apiserver does: the media types in order of preference (q), the
// first one served wins. Protobuf and CBOR are not served, so a client that
// accepts only them gets 406 Not Acceptable; one that also accepts JSON gets
// JSON. A media type asking for a conversion (as=Table) is chosen only when
// the conversion is one of conversions; collection says whether the
// endpoint also serves watch streams (named in the 406 message).
func Negotiate(accept string, collection bool, conversions ...string) (Negotiated, error) {
	if strings.TrimSpace(accept) == "" {
		return Negotiated{MediaType: JSON}, nil
	}
	type clause struct {
		mediaType string
		params    map[string]string
		q         float64
	}
	var clauses []clause
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > 0 {
			clauses = append(clauses, clause{mt, params, q})
		}
	}
	slices.SortStableFunc(clauses, func(a, b clause) int { return cmp.Compare(b.q, a.q) })
	servable := false
	for _, c := range clauses {
		mt := c.mediaType
		switch mt {
		case "*/*", "application/*":
			mt = JSON
		case JSON, YAML:
		default:
			continue
		}
		as := c.params["as"]
		if as == "" {
			return Negotiated{MediaType: mt}, nil
		}
		servable = true
		v := c.params["v"]
		if c.params["g"] == metaGroup && (v == "v1" || v == "v1beta1") && slices.Contains(conversions, as) {
			return Negotiated{MediaType: mt, As: as, Version: v}, nil
		}
	}
	if servable {
		return Negotiated{}, notAcceptable(onlyAcceptedPrefix+servedTypes, nil)
	}
	msg := notAcceptableRepresentations + servedTypes
	if collection {
		msg += servedStreamTypes
	}
	return Negotiated{}, notAcceptable(msg, &metav1.StatusDetails{})
}

func notAcceptable(msg string, details *metav1.StatusDetails) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReasonNotAcceptable, Message: msg, Details: details,
	}}
}
