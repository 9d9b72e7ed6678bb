package structural

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"net"
	"net/mail"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// objectMetaFields are the fields of ObjectMeta; anything else under an
// object's metadata is unknown and pruned, as decoding into ObjectMeta does.
var objectMetaFields = []string{
	"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
	"ownerReferences", "finalizers", "managedFields",
}

// Prune removes from obj, a custom object of schema s, every field the
// schema does not know, unless x-kubernetes-preserve-unknown-fields keeps
// them, and returns the removed fields' paths ("spec.x", "metadata.y"),
// sorted, as kube-apiserver reports them.
func (s *Schema) Prune(obj map[string]any) []string {
	var unknown []string
	pruneObject(s, obj, nil, true, &unknown)
	slices.Sort(unknown)
	return unknown
}

func pruneObject(s *Schema, obj map[string]any, path *field.Path, resource bool, unknown *[]string) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		p := path.Child(k)
		if resource && (k == "apiVersion" || k == "kind") {
			continue
		}
		if resource && k == "metadata" {
			if md, ok := obj[k].(map[string]any); ok {
				for _, f := range slices.Sorted(maps.Keys(md)) {
					if !slices.Contains(objectMetaFields, f) {
						*unknown = append(*unknown, p.Child(f).String())
						delete(md, f)
					}
				}
			}
			continue
		}
		child, known := s.Properties[k]
		switch {
		case known:
		case s.AdditionalProperties != nil:
			child = s.AdditionalProperties
		case s.PreserveUnknownFields:
			continue
		default:
			*unknown = append(*unknown, p.String())
			delete(obj, k)
			continue
		}
		prune(child, obj[k], p, unknown)
	}
}

func prune(s *Schema, v any, path *field.Path, unknown *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if s.Properties != nil || s.AdditionalProperties != nil || !s.PreserveUnknownFields || s.EmbeddedResource {
			pruneObject(s, x, path, s.EmbeddedResource, unknown)
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				prune(s.Items, e, path.Index(i), unknown)
			}
		}
	}
}

// ApplyDefaults sets the defaults of s on obj where a field is absent (or null
// and not nullable), as kube-apiserver does when it decodes a custom object.
func (s *Schema) ApplyDefaults(obj map[string]any) { applyDefault(s, obj) }

func applyDefault(s *Schema, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[k]
			cur, present := x[k]
			switch {
			case p.HasDefault && (!present || cur == nil && !p.Nullable):
				x[k] = DeepCopy(p.Default)
			case present && cur == nil && !p.Nullable:
				delete(x, k) // null where null is not allowed is dropped
			}
			if e, ok := x[k]; ok {
				applyDefault(p, e)
			}
		}
		if s.AdditionalProperties != nil {
			for k, e := range x {
				if e == nil && !s.AdditionalProperties.Nullable {
					delete(x, k)
					continue
				}
				applyDefault(s.AdditionalProperties, e)
			}
		}
	case []any:
		if s.Items != nil {
			for _, e := range x {
				applyDefault(s.Items, e)
			}
		}
	}
}

// DeepCopy copies a decoded JSON value.
func DeepCopy(v any) any { return transform(v, func(x any) any { return x }) }

// transform copies a decoded JSON value, passing its scalars through leaf.
func transform(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = transform(e, leaf)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = transform(e, leaf)
		}
		return out
	}
	return leaf(v)
}

// Validate checks obj against s and returns the errors kube-apiserver
// gives, in its order: the OpenAPI checks (properties in name order, where
// kube-apiserver's order varies from one request to the next), then the
// embedded resources' apiVersion and kind, then the list types' duplicates.
// old is the object obj replaces (nil on create): as kube-apiserver
// ratchets validation, a value unchanged from old is not checked again.
func (s *Schema) Validate(obj, old map[string]any) field.ErrorList {
	p := prior{v: old, ok: old != nil}
	errs := validate(s, obj, nil, true, p)
	errs = append(errs, walk(s, obj, nil, p, embeddedErrors)...)
	return append(errs, walk(s, obj, nil, p, listErrors)...)
}

// prior is the old value at the place of a new one, if there is one.
type prior struct {
	v  any
	ok bool
}

// unchanged reports whether the new value v is the old one.
func (p prior) unchanged(v any) bool { return p.ok && equal(v, p.v) }

func (p prior) child(key string) prior {
	m, _ := p.v.(map[string]any)
	v, ok := m[key]
	return prior{v: v, ok: p.ok && ok}
}

func (p prior) item(s *Schema, e any) prior {
	l, _ := p.v.([]any)
	v, ok := Correlate(s, e, l)
	return prior{v: v, ok: p.ok && ok}
}

// Correlate finds the old element of a list element e of schema s (the
// list's): the one with the same keys in a map list, the same value in a
// set; the elements of atomic lists have none.
func Correlate(s *Schema, e any, old []any) (any, bool) {
	switch s.ListType {
	case "map":
		m, _ := e.(map[string]any)
		for _, o := range old {
			om, _ := o.(map[string]any)
			same := om != nil
			for _, k := range s.ListMapKeys {
				same = same && equal(om[k], m[k])
			}
			if same {
				return o, true
			}
		}
	case "set":
		for _, o := range old {
			if equal(o, e) {
				return o, true
			}
		}
	}
	return nil, false
}

// walk calls check on every value that has a schema, in name order, but
// for those unchanged from before.
func walk(s *Schema, v any, path *field.Path, p prior, check func(*Schema, any, *field.Path) field.ErrorList) field.ErrorList {
	if p.unchanged(v) {
		return nil
	}
	errs := check(s, v, path)
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			child, ok := s.Properties[k]
			if !ok {
				child = s.AdditionalProperties
			}
			if child != nil {
				errs = append(errs, walk(child, x[k], path.Child(k), p.child(k), check)...)
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x {
				errs = append(errs, walk(s.Items, e, path.Index(i), p.item(s, e), check)...)
			}
		}
	}
	return errs
}

func embeddedErrors(s *Schema, v any, path *field.Path) field.ErrorList {
	obj, ok := v.(map[string]any)
	if !ok || !s.EmbeddedResource {
		return nil
	}
	var errs field.ErrorList
	for _, k := range []string{"apiVersion", "kind"} {
		if str, _ := obj[k].(string); str == "" {
			errs = append(errs, field.Required(path.Child(k), ""))
		}
	}
	return errs
}

func listErrors(s *Schema, v any, path *field.Path) field.ErrorList {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	switch s.ListType {
	case "set":
		for i, e := range list {
			if slices.ContainsFunc(list[:i], func(o any) bool { return equal(o, e) }) {
				errs = append(errs, field.Duplicate(path.Index(i), e))
			}
		}
	case "map":
		var seen []map[string]any
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			key := map[string]any{}
			for _, k := range s.ListMapKeys {
				if kv, ok := m[k]; ok {
					key[k] = kv
				}
			}
			if slices.ContainsFunc(seen, func(o map[string]any) bool { return equal(o, key) }) {
				errs = append(errs, field.Duplicate(path.Index(i), key))
			}
			seen = append(seen, key)
		}
	}
	return errs
}

// TypeName names a value's JSON type as kube-apiserver's errors do:
// "object", "array", "string", "integer", "number", "boolean", "null".
func TypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	}
}

func hasType(s *Schema, v any) bool {
	t := TypeName(v)
	switch {
	case t == "null":
		return s.Nullable || s.Type == "" && !s.IntOrString
	case s.IntOrString:
		return t == "integer" || t == "string"
	case s.Type == "", s.Type == t:
		return true
	}
	return s.Type == "number" && t == "integer"
}

func validate(s *Schema, v any, path *field.Path, resource bool, p prior) field.ErrorList {
	if p.unchanged(v) {
		return nil
	}
	var errs field.ErrorList
	if !hasType(s, v) {
		want := s.Type
		if s.IntOrString {
			want = "integer,string"
		}
		return field.ErrorList{field.TypeInvalid(path, TypeName(v), fmt.Sprintf("%s in body must be of type %s: %q", at(path), want, TypeName(v)))}
	}
	if v == nil {
		return nil
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return equal(e, v) }) {
		errs = append(errs, field.NotSupported(path, v, enumStrings(s.Enum)))
	}
	switch x := v.(type) {
	case map[string]any:
		errs = append(errs, validateObject(s, x, path, resource || s.EmbeddedResource, p)...)
	case []any:
		errs = append(errs, validateArray(s, x, path, p)...)
	case string:
		errs = append(errs, validateString(s, x, path)...)
	case bool:
	default:
		errs = append(errs, validateNumber(s, v, path)...)
	}
	return errs
}

func validateObject(s *Schema, obj map[string]any, path *field.Path, resource bool, p prior) field.ErrorList {
	var errs field.ErrorList
	n := int64(len(obj))
	if s.MaxProperties != nil && n > *s.MaxProperties {
		errs = append(errs, field.TooMany(path, int(n), int(*s.MaxProperties)))
	}
	if s.MinProperties != nil && n < *s.MinProperties {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("%s in body should have at least %d properties", at(path), *s.MinProperties)))
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if resource && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		child, ok := s.Properties[k]
		if !ok {
			child = s.AdditionalProperties
		}
		if child != nil {
			errs = append(errs, validate(child, obj[k], path.Child(k), false, p.child(k))...)
		}
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			errs = append(errs, field.Required(path.Child(r), ""))
		}
	}
	return errs
}

func validateArray(s *Schema, list []any, path *field.Path, p prior) field.ErrorList {
	var errs field.ErrorList
	n := int64(len(list))
	if s.MaxItems != nil && n > *s.MaxItems {
		errs = append(errs, field.TooMany(path, int(n), int(*s.MaxItems)))
	}
	if s.MinItems != nil && n < *s.MinItems {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("%s in body should have at least %d items", at(path), *s.MinItems)))
	}
	if s.Items != nil {
		for i, e := range list {
			errs = append(errs, validate(s.Items, e, path.Index(i), false, p.item(s, e))...)
		}
	}
	return errs
}

// validateString checks lengths and pattern, reporting the first failure
// only as kube-apiserver does, then the format.
func validateString(s *Schema, str string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := int64(utf8.RuneCountInString(str))
	switch {
	case s.MaxLength != nil && n > *s.MaxLength:
		errs = append(errs, field.TooLong(path, str, int(*s.MaxLength)))
	case s.MinLength != nil && n < *s.MinLength:
		errs = append(errs, field.Invalid(path, str, fmt.Sprintf("%s in body should be at least %d chars long", at(path), *s.MinLength)))
	case s.Pattern != nil && !s.Pattern.MatchString(str):
		errs = append(errs, field.Invalid(path, str, fmt.Sprintf("%s in body should match '%s'", at(path), s.Pattern)))
	}
	if s.Format != "" && !validFormat(s.Format, str) {
		errs = append(errs, field.TypeInvalid(path, str, fmt.Sprintf("%s in body must be of type %s: %q", at(path), s.Format, str)))
	}
	return errs
}

func validateNumber(s *Schema, v any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	f, _ := toFloat(v)
	shown := numberValue(v)
	if s.Maximum != nil {
		if s.ExclusiveMaximum && f >= *s.Maximum {
			errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("%s in body should be less than %v", at(path), *s.Maximum)))
		} else if f > *s.Maximum {
			errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("%s in body should be less than or equal to %v", at(path), *s.Maximum)))
		}
	}
	if s.Minimum != nil {
		if s.ExclusiveMinimum && f <= *s.Minimum {
			errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("%s in body should be greater than %v", at(path), *s.Minimum)))
		} else if f < *s.Minimum {
			errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("%s in body should be greater than or equal to %v", at(path), *s.Minimum)))
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf != 0 && math.Mod(f, *s.MultipleOf) != 0 {
		errs = append(errs, field.Invalid(path, shown, fmt.Sprintf("%s in body should be a multiple of %v", at(path), *s.MultipleOf)))
	}
	return errs
}

// numberValue is a number as an Invalid error shows it: integers as
// integers.
func numberValue(v any) any {
	if isInteger(v) {
		f, _ := toFloat(v)
		return int64(f)
	}
	f, _ := toFloat(v)
	return f
}

func equal(a, b any) bool {
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if okA && okB {
		return fa == fb
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// normalize turns numbers into float64 so that values decoded differently
// compare equal.
func normalize(v any) any {
	return transform(v, func(x any) any {
		if f, ok := toFloat(x); ok {
			return f
		}
		return x
	})
}

func enumStrings(enum []any) []string {
	out := make([]string, 0, len(enum))
	for _, e := range enum {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		default:
			out = append(out, fmt.Sprint(numberOr(x)))
		}
	}
	return out
}

func numberOr(v any) any {
	if _, ok := toFloat(v); ok {
		return numberValue(v)
	}
	return v
}

// The patterns are compiled when first used, not at every start (the
// hostname's is a tenth of a megabyte).
var (
	uuidPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	})
	hostnamePattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$`)
	})
)

// validFormat checks the string formats Kubernetes validates; formats it
// does not know are accepted, as the real server accepts them.
func validFormat(format, s string) bool {
	switch format {
	case "date-time", "datetime":
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case "date":
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	case "uuid":
		return uuidPattern().MatchString(s)
	case "hostname":
		return len(s) <= 255 && hostnamePattern().MatchString(s)
	case "ipv4":
		ip := net.ParseIP(s)
		return ip != nil && ip.To4() != nil && !strings.Contains(s, ":")
	case "ipv6":
		return net.ParseIP(s) != nil && strings.Contains(s, ":")
	case "cidr":
		_, _, err := net.ParseCIDR(s)
		return err == nil
	case "mac":
		_, err := net.ParseMAC(s)
		return err == nil
	case "email":
		_, err := mail.ParseAddress(s)
		return err == nil
	case "byte":
		_, err := base64.StdEncoding.DecodeString(s)
		return err == nil
	case "duration":
		_, err := ParseDuration(s)
		return err == nil
	}
	return true
}

// at names a path in messages: "" for the root.
func at(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}

var durationPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\s*([A-Za-zµ]+)`) })

// durationUnits are the units of OpenAPI durations, each with its
// spellings; the last of each is also a prefix ("hour" for "hours").
var durationUnits = []struct {
	unit      time.Duration
	spellings []string
}{
	{time.Nanosecond, []string{"ns", "nano"}},
	{time.Microsecond, []string{"us", "µs", "micro"}},
	{time.Millisecond, []string{"ms", "milli"}},
	{time.Second, []string{"s", "sec"}},
	{time.Minute, []string{"m", "min"}},
	{time.Hour, []string{"h", "hr", "hour"}},
	{24 * time.Hour, []string{"d", "day"}},
	{7 * 24 * time.Hour, []string{"w", "wk", "week"}},
}

// ParseDuration reads a string of format duration as Kubernetes does: a Go
// duration, or numbers with units such as "1d", "2 weeks", "3h 5min".
func ParseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	var d time.Duration
	ok := false
	for _, m := range durationPart().FindAllStringSubmatch(s, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, err
		}
		unit := strings.ToLower(strings.TrimSpace(m[2]))
		for _, u := range durationUnits {
			last := len(u.spellings) - 1
			for i, spelling := range u.spellings {
				if i == last && strings.HasPrefix(unit, spelling) || strings.EqualFold(spelling, unit) {
					ok = true
					d += time.Duration(n) * u.unit
				}
			}
		}
	}
	if !ok {
		return 0, fmt.Errorf("unable to parse %s as duration", s)
	}
	return d, nil
}
