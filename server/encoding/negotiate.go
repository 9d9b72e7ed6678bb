package encoding

import (
	"context"
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
	onlyAcceptedPrefix           = "only the following media types are accepted: "
	notAcceptableRepresentations = "406: Not Acceptable\n\nAvailable representations: "
)

// servedTypes lists the media types of the objects of r's resource, as
// kube-apiserver names them in a 406: JSON, YAML, protobuf, then CBOR when r
// was marked WithCBOR. The browser build names protobuf too, so that its
// messages are kube-apiserver's, though it never answers in it.
func servedTypes(r *http.Request) string {
	served := JSON + ", " + YAML + ", " + Protobuf
	if CBORServed(r) {
		served += ", " + CBOR
	}
	return served
}

// servedStreamTypes lists the media types of r's watch streams, in the
// order of servedTypes.
func servedStreamTypes(r *http.Request) string {
	served := JSON + ";stream=watch, " + ProtobufWatch
	if CBORServed(r) {
		served += ", " + CBORSeq
	}
	return served
}

type customResourceKey struct{}

// ForCustomResource marks a request for a custom resource, whose objects
// kube-apiserver's CRD handler serves in JSON and YAML (and CBOR) but not in
// protobuf: a client that also accepts JSON gets JSON, and every 406 is "only
// the following media types are accepted", naming protobuf all the same. Its
// Status errors are still written in protobuf for a client that asks.
func ForCustomResource(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), customResourceKey{}, true))
}

func customResource(r *http.Request) bool {
	on, _ := r.Context().Value(customResourceKey{}).(bool)
	return on
}

// conversions are all the conversions the server knows.
var conversions = []string{AsTable, AsPartialObjectMetadata, AsPartialObjectMetadataList}

// Acceptable returns the 406 Not Acceptable Status when nothing the server
// serves is acceptable to the client of r.
func Acceptable(r *http.Request, collection bool) error {
	_, err := Negotiate(r, collection, conversions...)
	return err
}

// Negotiated is the representation chosen for a response.
type Negotiated struct {
	// MediaType is JSON, YAML, Protobuf or CBOR.
	MediaType string
	// As is the conversion asked for (AsTable, ...), empty for the object
	// itself; Version is its meta.k8s.io version (v1 or v1beta1).
	As, Version string
}

// Negotiate picks the representation of a response from r's Accept header,
// as kube-apiserver does: the media types in its order of preference (see
// acceptClauses), the first one served wins. Protobuf is served natively for
// built-in resources and the metadata of custom ones only, CBOR only when r
// was marked WithCBOR, so a client that accepts only them gets 406 Not
// Acceptable otherwise; one that also accepts JSON gets JSON. A media type
// asking for a conversion (as=Table) is chosen only when the conversion is
// one of conversions (and no Table in CBOR or protobuf, as kube-apiserver);
// collection says whether the endpoint also serves watch streams (named in
// the 406 message).
func Negotiate(r *http.Request, collection bool, conversions ...string) (Negotiated, error) {
	accept := r.Header.Get("Accept")
	cbor := CBORServed(r)
	if strings.TrimSpace(accept) == "" {
		return Negotiated{MediaType: JSON}, nil
	}
	servable := false
	for _, c := range acceptClauses(accept) {
		mt := c.mediaType
		switch mt {
		case "*/*":
			mt = JSON
		case JSON, YAML:
		case Protobuf:
			// Custom objects have no protobuf form, but their metadata
			// (as=PartialObjectMetadata[List]) has; the browser build has
			// none at all, and refuses it as kube-apiserver refuses a form
			// it cannot convert to.
			if (customResource(r) || !ProtobufServed) && c.params["as"] == "" {
				continue
			}
		case CBOR:
			if !cbor {
				continue
			}
		case CBORSeq:
			// A stream type: where streams are served, kube-apiserver
			// names the types a response can be in, as for as=.
			servable = servable || cbor && collection
			continue
		default:
			continue // application/* too: kube-apiserver matches no wildcard but */*
		}
		as := c.params["as"]
		if as == "" {
			return Negotiated{MediaType: mt}, nil
		}
		servable = true
		v := c.params["v"]
		if c.params["g"] == metaGroup && (v == "v1" || v == "v1beta1") && slices.Contains(conversions, as) &&
			(mt != CBOR && mt != Protobuf || as != AsTable) && (mt != Protobuf || ProtobufServed) {
			return Negotiated{MediaType: mt, As: as, Version: v}, nil
		}
	}
	if servable || customResource(r) {
		return Negotiated{}, notAcceptable(onlyAcceptedPrefix+servedTypes(r), nil)
	}
	msg := notAcceptableRepresentations + servedTypes(r)
	if collection {
		msg += ", " + servedStreamTypes(r)
	}
	return Negotiated{}, notAcceptable(msg, &metav1.StatusDetails{})
}

// statusMediaType is the media type of a Status answering r with an error:
// kube-apiserver writes it in the first media type the client accepts
// without a conversion (a clause with as= cannot carry a Status), protobuf
// included whatever the resource, and in JSON when there is none.
func statusMediaType(r *http.Request) string {
	for _, c := range acceptClauses(r.Header.Get("Accept")) {
		if c.params["as"] != "" {
			continue
		}
		switch c.mediaType {
		case "*/*", JSON:
			return JSON
		case YAML:
			return YAML
		case Protobuf:
			if ProtobufServed {
				return Protobuf
			}
		case CBOR:
			if CBORServed(r) {
				return CBOR
			}
		}
	}
	return JSON
}

// NegotiateGroups picks the media type of /apis and /apis/<group>, which
// kube-apiserver serves by rules of their own: any application/* type
// is JSON, a type with as= is passed over (never refused for it), and every
// refusal names the types served without details.
func NegotiateGroups(r *http.Request) (string, error) {
	if strings.TrimSpace(r.Header.Get("Accept")) == "" {
		return JSON, nil
	}
	for _, c := range acceptClauses(r.Header.Get("Accept")) {
		if c.params["as"] != "" {
			continue
		}
		switch c.mediaType {
		case "*/*", "application/*", JSON:
			return JSON, nil
		case YAML:
			return YAML, nil
		case Protobuf:
			if ProtobufServed {
				return Protobuf, nil
			}
		}
	}
	return "", notAcceptable(onlyAcceptedPrefix+servedTypes(r), nil)
}

// NegotiateOnly checks that the client of a path that has one
// representation, mediaType, accepts it (whatever the parameters, as
// kube-apiserver's go-restful routes: /version, the issuer discovery
// documents).
func NegotiateOnly(r *http.Request, mediaType string) error {
	if strings.TrimSpace(r.Header.Get("Accept")) == "" {
		return nil
	}
	for _, c := range acceptClauses(r.Header.Get("Accept")) {
		if c.mediaType == mediaType || c.mediaType == "*/*" {
			return nil
		}
	}
	return notAcceptable(notAcceptableRepresentations+mediaType, &metav1.StatusDetails{})
}

// acceptClause is one media type of an Accept header.
type acceptClause struct {
	mediaType string
	params    map[string]string
	q         float64
}

// acceptClauses parses an Accept header into kube-apiserver's order of
// preference. Its comparison puts a clause first when its quality is higher
// OR its type or subtype is concrete where the other's is a wildcard, so
// "*/*;q=0.2, application/yaml;q=0.1" prefers YAML; the insertion sort below
// gives the order kube-apiserver's sort gives for up to 12 clauses. A
// quality of 0 does not refuse a type, and one that does not parse is 0.
func acceptClauses(accept string) []acceptClause {
	var clauses []acceptClause
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			q, _ = strconv.ParseFloat(v, 64)
		}
		clauses = append(clauses, acceptClause{mt, params, q})
	}
	before := func(a, b acceptClause) bool {
		at, as, _ := strings.Cut(a.mediaType, "/")
		bt, bs, _ := strings.Cut(b.mediaType, "/")
		return a.q > b.q || at != "*" && bt == "*" || as != "*" && bs == "*"
	}
	for i := 1; i < len(clauses); i++ {
		for j := i; j > 0 && before(clauses[j], clauses[j-1]); j-- {
			clauses[j], clauses[j-1] = clauses[j-1], clauses[j]
		}
	}
	return clauses
}

func notAcceptable(msg string, details *metav1.StatusDetails) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReasonNotAcceptable, Message: msg, Details: details,
	}}
}

// NotAcceptableStream is the 406 for a watch asked for in a media type
// that has no stream form (YAML).
func NotAcceptableStream(r *http.Request) error {
	return notAcceptable(onlyAcceptedPrefix+servedStreamTypes(r), nil)
}
