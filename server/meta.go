package server

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
	"kubeplay/server/fieldmanager"
)

// object is a decoded Kubernetes object.
type object = map[string]any

// metadata returns obj's metadata map, creating it if missing.
func metadata(obj object) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// generatedNameChars are the characters kube-apiserver draws generated name
// suffixes from (no vowels, so no words; no look-alike characters).
const generatedNameChars = "bcdfghjklmnpqrstvwxz2456789"

// GenerateName returns prefix with a random suffix, as kube-apiserver
// completes a generateName.
func GenerateName(prefix string) string {
	const maxNameLength, suffixLength = 63, 5
	if len(prefix) > maxNameLength-suffixLength {
		prefix = prefix[:maxNameLength-suffixLength]
	}
	b := make([]byte, suffixLength)
	for i := range b {
		b[i] = generatedNameChars[rand.IntN(len(generatedNameChars))]
	}
	return prefix + string(b)
}

// validateName checks a name against the rule its type follows, with the
// messages kube-apiserver gives.
func validateName(r *catalog.Resource, name string, path *field.Path) field.ErrorList {
	var msgs []string
	switch catalog.NameRuleOf(r) {
	case catalog.DNSSubdomain:
		msgs = validation.IsDNS1123Subdomain(name)
	case catalog.LongName:
		msgs = content.IsDNS1123Subdomain(name)
	case catalog.DNSLabel:
		msgs = validation.IsDNS1123Label(name)
	case catalog.DNS1035Label:
		msgs = validation.IsDNS1035Label(name)
	case catalog.PathSegment:
		msgs = pathSegmentErrors(name)
	case catalog.IPAddress:
		if _, err := netip.ParseAddr(name); err != nil {
			msgs = []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}
		}
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, name, m))
	}
	return errs
}

// maskTrailingDash lets a generateName end in "-", as kube-apiserver
// validates a prefix: the name it completes will not.
func maskTrailingDash(prefix string) string {
	if len(prefix) > 1 && strings.HasSuffix(prefix, "-") {
		return prefix[:len(prefix)-1] + "a"
	}
	return prefix
}

func pathSegmentErrors(name string) []string {
	switch name {
	case ".", "..":
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var msgs []string
	for _, c := range []string{"/", "%"} {
		if strings.Contains(name, c) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", c))
		}
	}
	return msgs
}

// hasStatus reports whether r's status is written through a /status
// subresource, so that writes of the main resource leave it alone.
func hasStatus(r *catalog.Resource) bool { return hasSubresource(r, "status") }

// applyDefaults does what kube-apiserver's decoding does to an object
// before its field manager records who set what: a namespace's
// kubernetes.io/metadata.name label, a Secret's stringData folded into data,
// the fields Go types hold as structs present, and the built-in types'
// defaults (which read those structs and may add more).
func applyDefaults(r *catalog.Resource, obj object) error {
	if err := fieldmanager.Materialize(r.GroupVersionKind(), obj); err != nil {
		return apierrors.NewInternalError(err)
	}
	defaults.Apply(r.GroupVersionKind(), obj)
	if err := fieldmanager.Materialize(r.GroupVersionKind(), obj); err != nil {
		return apierrors.NewInternalError(err)
	}
	if normalize := strategyOf(r).normalize; normalize != nil {
		normalize(obj)
	}
	if c := conversionOf(r); c != nil && c.DecodesThroughStorage {
		viaStorage(r, obj)
	}
	return nil
}

// prepareForCreate sets the metadata the server owns on a new object, and
// applies the type's own rules for new objects.
func (s *registry) prepareForCreate(r *catalog.Resource, obj object) {
	md := metadata(obj)
	for _, k := range []string{"uid", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(md, k)
	}
	md["uid"] = string(uuid.NewUUID())
	md["creationTimestamp"] = s.now().UTC().Format("2006-01-02T15:04:05Z")
	st := strategyOf(r)
	if st.tracksGeneration {
		md["generation"] = int64(1)
	}
	if _, ok := obj["status"]; ok && hasStatus(r) && !st.keepsStatusOnCreate {
		obj["status"] = fieldmanager.NewObject(r.GroupVersionKind())["status"]
	}
	defaults.PrepareForCreate(r.GroupVersionKind(), obj, s.now())
	if st.prepareForCreate != nil {
		st.prepareForCreate(obj)
	}
}

// prepareForUpdate carries over what an update of the main resource cannot
// change and bumps the generation when the object's desired state changed.
func prepareForUpdate(r *catalog.Resource, subresource string, obj, old object) {
	md, oldMD := metadata(obj), metadata(old)
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		if v, ok := oldMD[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
	delete(md, "selfLink")
	if hasStatus(r) && subresource != "status" {
		if st, ok := old["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	st := strategyOf(r)
	if st.prepareForUpdate != nil {
		st.prepareForUpdate(subresource, obj, old)
	}
	defaults.PrepareForUpdate(r.GroupVersionKind(), obj, old)
	// A Deployment's annotations once carried rollback requests; they
	// change through /status too, where kube-controller-manager writes them.
	annotationsChanged := st.annotationsAreDesiredState && subresource != "status" && !reflect.DeepEqual(md["annotations"], oldMD["annotations"])
	if st.tracksGeneration && (annotationsChanged || !reflect.DeepEqual(desiredState(obj), desiredState(old))) {
		md["generation"] = generationOf(oldMD) + 1
	}
}

// desiredState is an object without its metadata and status: what a change of
// generation tracks.
func desiredState(obj object) object {
	out := maps.Clone(obj)
	for _, k := range []string{"metadata", "status", "kind", "apiVersion"} {
		delete(out, k)
	}
	return out
}

func generationOf(md map[string]any) int64 { return int64Of(md["generation"]) }

// normalizeSecret folds stringData into data (base64) and defaults the type,
// as the Secret's API conversion does.
func normalizeSecret(obj object) {
	if sd, ok := obj["stringData"].(map[string]any); ok {
		data, _ := obj["data"].(map[string]any)
		if data == nil {
			data = map[string]any{}
		}
		for k, v := range sd {
			if s, ok := v.(string); ok {
				data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			}
		}
		obj["data"] = data
	}
	delete(obj, "stringData")
	if t, _ := obj["type"].(string); t == "" {
		obj["type"] = "Opaque"
	}
}

// errInvalid is the 422 for an object that failed validation.
func errInvalid(r *catalog.Resource, name string, errs field.ErrorList) error {
	kind := qualifiedKind(r)
	if strategyOf(r).coreInternalType {
		kind.Group = ""
	}
	return apierrors.NewInvalid(kind, name, errs)
}
