package celrules

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// library is the part of the Kubernetes CEL libraries kubeplay implements:
// lists (isSorted, sum, min, max, indexOf, lastIndexOf), regex (find,
// findAll), URLs (url, isURL and the getters), quantities (quantity,
// isQuantity, comparisons, arithmetic and sign, which kube-apiserver v1.35
// declares as a function, sign(q), not as a method), IP addresses and
// CIDRs (ip, isIP, cidr, isCIDR and their methods), formats (format.named,
// format.dns1123Label() and the others, validate) and semantic versions
// (isSemver, semver and their methods). The authz library is admission's
// alone (see AdmissionEnv).
func library() []cel.EnvOption {
	var opts []cel.EnvOption
	opts = append(opts, listsLibrary()...)
	opts = append(opts, regexLibrary()...)
	opts = append(opts, urlLibrary()...)
	opts = append(opts, quantityLibrary()...)
	opts = append(opts, formatLibrary()...)
	opts = append(opts, semverLibrary()...)
	return append(opts, ipLibrary()...)
}

// opaque is a value of one of the libraries' types.
type opaque[T any] struct {
	typ *types.Type
	v   T
	eq  func(a, b T) bool
}

func (o opaque[T]) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s'", o.typ.TypeName())
}

func (o opaque[T]) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case o.typ:
		return o
	case types.TypeType:
		return o.typ
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.typ.TypeName(), t.TypeName())
}

func (o opaque[T]) Equal(other ref.Val) ref.Val {
	x, ok := other.(opaque[T])
	return types.Bool(ok && o.eq(o.v, x.v))
}

func (o opaque[T]) Type() ref.Type { return o.typ }
func (o opaque[T]) Value() any     { return o.v }

func unary[A ref.Val](f func(A) ref.Val) cel.OverloadOpt {
	return cel.UnaryBinding(func(v ref.Val) ref.Val {
		a, ok := v.(A)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return f(a)
	})
}

func binary[A, B ref.Val](f func(A, B) ref.Val) cel.OverloadOpt {
	return cel.BinaryBinding(func(v, w ref.Val) ref.Val {
		a, ok := v.(A)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		b, ok := w.(B)
		if !ok {
			return types.MaybeNoSuchOverloadErr(w)
		}
		return f(a, b)
	})
}

// Lists.

var listT = cel.ListType(cel.TypeParamType("T"))

func listsLibrary() []cel.EnvOption {
	comparable := []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.BoolType, cel.StringType, cel.BytesType, cel.DurationType, cel.TimestampType}
	summable := []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.DurationType}
	var isSorted, minOf, maxOf, sum []cel.FunctionOpt
	for _, t := range comparable {
		name := t.String()
		isSorted = append(isSorted, cel.MemberOverload("list_"+name+"_is_sorted_bool", []*cel.Type{cel.ListType(t)}, cel.BoolType, unary(func(l traits.Lister) ref.Val {
			return isSortedList(l)
		})))
		minOf = append(minOf, cel.MemberOverload("list_"+name+"_min_"+name, []*cel.Type{cel.ListType(t)}, t, unary(func(l traits.Lister) ref.Val {
			return extreme(l, "min", -1)
		})))
		maxOf = append(maxOf, cel.MemberOverload("list_"+name+"_max_"+name, []*cel.Type{cel.ListType(t)}, t, unary(func(l traits.Lister) ref.Val {
			return extreme(l, "max", 1)
		})))
	}
	for _, t := range summable {
		name := t.String()
		zero := map[string]ref.Val{"int": types.Int(0), "uint": types.Uint(0), "double": types.Double(0), "google.protobuf.Duration": types.Duration{}}[name]
		sum = append(sum, cel.MemberOverload("list_"+name+"_sum_"+name, []*cel.Type{cel.ListType(t)}, t, unary(func(l traits.Lister) ref.Val {
			acc := zero
			for it := l.Iterator(); it.HasNext() == types.True; {
				acc = acc.(traits.Adder).Add(it.Next())
				if types.IsError(acc) {
					return acc
				}
			}
			return acc
		})))
	}
	index := func(last bool) cel.OverloadOpt {
		return binary(func(l traits.Lister, v ref.Val) ref.Val {
			found := types.Int(-1)
			i := types.Int(0)
			for it := l.Iterator(); it.HasNext() == types.True; i++ {
				if it.Next().Equal(v) == types.True {
					found = i
					if !last {
						return found
					}
				}
			}
			return found
		})
	}
	return []cel.EnvOption{
		cel.Function("isSorted", isSorted...),
		cel.Function("min", minOf...),
		cel.Function("max", maxOf...),
		cel.Function("sum", sum...),
		cel.Function("indexOf", cel.MemberOverload("list_a_index_of_int", []*cel.Type{listT, cel.TypeParamType("T")}, cel.IntType, index(false))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{listT, cel.TypeParamType("T")}, cel.IntType, index(true))),
	}
}

func isSortedList(l traits.Lister) ref.Val {
	var prev ref.Val
	for it := l.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		if prev != nil {
			c, ok := prev.(traits.Comparer)
			if !ok {
				return types.MaybeNoSuchOverloadErr(prev)
			}
			if cmp := c.Compare(v); types.IsError(cmp) {
				return cmp
			} else if cmp.(types.Int) > 0 {
				return types.False
			}
		}
		prev = v
	}
	return types.True
}

func extreme(l traits.Lister, name string, sign types.Int) ref.Val {
	var best ref.Val
	for it := l.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		if best == nil {
			best = v
			continue
		}
		c, ok := v.(traits.Comparer)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		if cmp := c.Compare(best); types.IsError(cmp) {
			return cmp
		} else if cmp.(types.Int)*sign > 0 {
			best = v
		}
	}
	if best == nil {
		return types.NewErr("%s called on empty list", name)
	}
	return best
}

// Regular expressions.

func regexLibrary() []cel.EnvOption {
	compile := func(re types.String) (*regexp.Regexp, ref.Val) {
		r, err := regexp.Compile(string(re))
		if err != nil {
			return nil, types.NewErr("%v", err)
		}
		return r, nil
	}
	findAll := func(s, re types.String, n int) ref.Val {
		r, err := compile(re)
		if err != nil {
			return err
		}
		return types.DefaultTypeAdapter.NativeToValue(r.FindAllString(string(s), n))
	}
	return []cel.EnvOption{
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType,
			binary(func(s, re types.String) ref.Val {
				r, err := compile(re)
				if err != nil {
					return err
				}
				return types.String(r.FindString(string(s)))
			}))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				binary(func(s, re types.String) ref.Val { return findAll(s, re, -1) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					s, ok1 := args[0].(types.String)
					re, ok2 := args[1].(types.String)
					n, ok3 := args[2].(types.Int)
					if !ok1 || !ok2 || !ok3 {
						return types.NoSuchOverloadErr()
					}
					return findAll(s, re, int(n))
				}))),
	}
}

// URLs.

var urlType = cel.OpaqueType("kubernetes.URL")

type urlVal = opaque[*url.URL]

// parseURL accepts an absolute URL or an absolute path.
func parseURL(s string) (*url.URL, error) { return url.ParseRequestURI(s) }

func urlLibrary() []cel.EnvOption {
	get := func(name string, f func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("url_"+name, []*cel.Type{urlType}, cel.StringType,
			unary(func(u urlVal) ref.Val { return types.String(f(u.v)) })))
	}
	return []cel.EnvOption{
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType,
			unary(func(s types.String) ref.Val {
				u, err := parseURL(string(s))
				if err != nil {
					return types.NewErr("URL parse error during conversion from string: %v", err)
				}
				return urlVal{typ: urlType, v: u, eq: func(a, b *url.URL) bool { return a.String() == b.String() }}
			}))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType,
			unary(func(s types.String) ref.Val {
				_, err := parseURL(string(s))
				return types.Bool(err == nil)
			}))),
		get("getScheme", func(u *url.URL) string { return u.Scheme }),
		get("getHost", func(u *url.URL) string { return u.Host }),
		get("getHostname", func(u *url.URL) string { return u.Hostname() }),
		get("getPort", func(u *url.URL) string { return u.Port() }),
		get("getEscapedPath", func(u *url.URL) string { return u.EscapedPath() }),
		cel.Function("getQuery", cel.MemberOverload("url_getQuery", []*cel.Type{urlType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			unary(func(u urlVal) ref.Val {
				return types.DefaultTypeAdapter.NativeToValue(map[string][]string(u.v.Query()))
			}))),
	}
}

// Quantities.

var quantityType = cel.OpaqueType("kubernetes.Quantity")

type quantityVal = opaque[resource.Quantity]

func quantityOf(q resource.Quantity) quantityVal {
	return quantityVal{typ: quantityType, v: q, eq: func(a, b resource.Quantity) bool { return a.Equal(b) }}
}

func quantityLibrary() []cel.EnvOption {
	q := []*cel.Type{quantityType}
	qq := []*cel.Type{quantityType, quantityType}
	qi := []*cel.Type{quantityType, cel.IntType}
	arith := func(name string, neg bool) cel.EnvOption {
		apply := func(a resource.Quantity, b resource.Quantity) ref.Val {
			out := a.DeepCopy()
			if neg {
				out.Sub(b)
			} else {
				out.Add(b)
			}
			return quantityOf(out)
		}
		return cel.Function(name,
			cel.MemberOverload("quantity_"+name, qq, quantityType, binary(func(a, b quantityVal) ref.Val { return apply(a.v, b.v) })),
			cel.MemberOverload("quantity_"+name+"_int", qi, quantityType, binary(func(a quantityVal, b types.Int) ref.Val {
				return apply(a.v, *resource.NewQuantity(int64(b), resource.DecimalSI))
			})))
	}
	compare := func(name string, want func(int) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("quantity_"+name, qq, cel.BoolType,
			binary(func(a, b quantityVal) ref.Val { return types.Bool(want(a.v.Cmp(b.v))) })))
	}
	return []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType,
			unary(func(s types.String) ref.Val {
				parsed, err := resource.ParseQuantity(string(s))
				if err != nil {
					return types.NewErr("%v", err)
				}
				return quantityOf(parsed)
			}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			unary(func(s types.String) ref.Val {
				_, err := resource.ParseQuantity(string(s))
				return types.Bool(err == nil)
			}))),
		cel.Function("sign", cel.Overload("quantity_sign", q, cel.IntType,
			unary(func(a quantityVal) ref.Val { return types.Int(a.v.Sign()) }))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", q, cel.BoolType,
			unary(func(a quantityVal) ref.Val { _, ok := a.v.AsInt64(); return types.Bool(ok) }))),
		cel.Function("asInteger", cel.MemberOverload("quantity_as_integer", q, cel.IntType,
			unary(func(a quantityVal) ref.Val {
				n, ok := a.v.AsInt64()
				if !ok {
					return types.NewErr("cannot convert value to integer")
				}
				return types.Int(n)
			}))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", q, cel.DoubleType,
			unary(func(a quantityVal) ref.Val { return types.Double(a.v.AsApproximateFloat64()) }))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", qq, cel.IntType,
			binary(func(a, b quantityVal) ref.Val { return types.Int(a.v.Cmp(b.v)) }))),
		compare("isGreaterThan", func(c int) bool { return c > 0 }),
		compare("isLessThan", func(c int) bool { return c < 0 }),
		arith("add", false),
		arith("sub", true),
	}
}

// IP addresses and CIDRs.

var (
	ipType   = cel.OpaqueType("net.IP")
	cidrType = cel.OpaqueType("net.CIDR")
)

type (
	ipVal   = opaque[netip.Addr]
	cidrVal = opaque[netip.Prefix]
)

func ipOf(a netip.Addr) ipVal {
	return ipVal{typ: ipType, v: a, eq: func(x, y netip.Addr) bool { return x == y }}
}

func cidrOf(p netip.Prefix) cidrVal {
	return cidrVal{typ: cidrType, v: p, eq: func(x, y netip.Prefix) bool { return x == y }}
}

// parseIP accepts what Kubernetes accepts: no zones, no IPv4-mapped IPv6.
func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, fmt.Errorf("IP Address %q parse error during conversion from string: %v", s, err)
	}
	if a.Zone() != "" || a.Is4In6() {
		return a, fmt.Errorf("IP Address %q is not supported", s)
	}
	return a, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return p, fmt.Errorf("CIDR %q is not supported", s)
	}
	return p, nil
}

func ipLibrary() []cel.EnvOption {
	ipTest := func(name string, f func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("ip_"+name, []*cel.Type{ipType}, cel.BoolType,
			unary(func(a ipVal) ref.Val { return types.Bool(f(a.v)) })))
	}
	return []cel.EnvOption{
		cel.Function("ip",
			cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, unary(func(s types.String) ref.Val {
				a, err := parseIP(string(s))
				if err != nil {
					return types.NewErr("%v", err)
				}
				return ipOf(a)
			})),
			cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType, unary(func(c cidrVal) ref.Val { return ipOf(c.v.Addr()) }))),
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(s types.String) ref.Val {
			_, err := parseIP(string(s))
			return types.Bool(err == nil)
		}))),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(s types.String) ref.Val {
			a, err := parseIP(string(s))
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Bool(a.String() == string(s))
		}))),
		cel.Function("family", cel.MemberOverload("ip_family", []*cel.Type{ipType}, cel.IntType, unary(func(a ipVal) ref.Val {
			if a.v.Is4() {
				return types.Int(4)
			}
			return types.Int(6)
		}))),
		ipTest("isUnspecified", netip.Addr.IsUnspecified),
		ipTest("isLoopback", netip.Addr.IsLoopback),
		ipTest("isLinkLocalMulticast", netip.Addr.IsLinkLocalMulticast),
		ipTest("isLinkLocalUnicast", netip.Addr.IsLinkLocalUnicast),
		ipTest("isGlobalUnicast", netip.Addr.IsGlobalUnicast),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, unary(func(s types.String) ref.Val {
			p, err := parseCIDR(string(s))
			if err != nil {
				return types.NewErr("%v", err)
			}
			return cidrOf(p)
		}))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(s types.String) ref.Val {
			_, err := parseCIDR(string(s))
			return types.Bool(err == nil)
		}))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, binary(func(c cidrVal, s types.String) ref.Val {
				a, err := parseIP(string(s))
				if err != nil {
					return types.NoSuchOverloadErr() // as kube-apiserver's
				}
				return types.Bool(c.v.Contains(a))
			})),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, binary(func(c cidrVal, a ipVal) ref.Val {
				return types.Bool(c.v.Contains(a.v))
			}))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, binary(func(c cidrVal, s types.String) ref.Val {
				p, err := parseCIDR(string(s))
				if err != nil {
					return types.NoSuchOverloadErr() // as kube-apiserver's
				}
				return types.Bool(c.v.Bits() <= p.Bits() && c.v.Contains(p.Addr()))
			})),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, binary(func(c, p cidrVal) ref.Val {
				return types.Bool(c.v.Bits() <= p.v.Bits() && c.v.Contains(p.v.Addr()))
			}))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType, unary(func(c cidrVal) ref.Val { return cidrOf(c.v.Masked()) }))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType, unary(func(c cidrVal) ref.Val { return types.Int(c.v.Bits()) }))),
		cel.Function("string", cel.Overload("ip_to_string", []*cel.Type{ipType}, cel.StringType, unary(func(a ipVal) ref.Val { return types.String(a.v.String()) })),
			cel.Overload("cidr_to_string", []*cel.Type{cidrType}, cel.StringType, unary(func(c cidrVal) ref.Val { return types.String(c.v.String()) }))),
	}
}

// Formats.

var formatType = cel.OpaqueType("kubernetes.NamedFormat")

type format struct {
	name     string
	validate func(string) []string
}

type formatVal = opaque[format]

// formats are the named formats of the Kubernetes format library.
var formats = map[string]func(string) []string{
	"dns1123Label":           validation.IsDNS1123Label,
	"dns1123Subdomain":       validation.IsDNS1123Subdomain,
	"dns1035Label":           validation.IsDNS1035Label,
	"qualifiedName":          validation.IsQualifiedName,
	"dns1123LabelPrefix":     prefixOf(validation.IsDNS1123Label),
	"dns1123SubdomainPrefix": prefixOf(validation.IsDNS1123Subdomain),
	"dns1035LabelPrefix":     prefixOf(validation.IsDNS1035Label),
	"labelValue":             validation.IsValidLabelValue,
	"uri": func(s string) []string {
		if _, err := url.ParseRequestURI(s); err != nil {
			return []string{err.Error()}
		}
		return nil
	},
	"uuid": func(s string) []string {
		if !uuidFormat.MatchString(s) {
			return []string{"does not match the UUID format"}
		}
		return nil
	},
	"byte": func(s string) []string {
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return []string{"invalid base64"}
		}
		return nil
	},
	"date": func(s string) []string {
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return []string{"invalid date"}
		}
		return nil
	},
	"datetime": func(s string) []string {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return []string{"invalid datetime"}
		}
		return nil
	},
}

var uuidFormat = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// prefixOf validates a generateName as Kubernetes does: a trailing "-"
// and the character before it stand for the suffix to be generated.
func prefixOf(f func(string) []string) func(string) []string {
	return func(s string) []string {
		if len(s) > 1 && strings.HasSuffix(s, "-") {
			s = s[:len(s)-2] + "a"
		}
		return f(s)
	}
}

func formatOf(name string) formatVal {
	return formatVal{typ: formatType, v: format{name: name, validate: formats[name]}, eq: func(a, b format) bool { return a.name == b.name }}
}

func formatLibrary() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			unary(func(s types.String) ref.Val {
				if _, ok := formats[string(s)]; !ok {
					return types.OptionalNone
				}
				return types.OptionalOf(formatOf(string(s)))
			}))),
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType}, cel.OptionalType(cel.ListType(cel.StringType)),
			binary(func(f formatVal, s types.String) ref.Val {
				msgs := f.v.validate(string(s))
				if len(msgs) == 0 {
					return types.OptionalNone
				}
				return types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(msgs))
			}))),
	}
	for _, name := range slices.Sorted(maps.Keys(formats)) {
		opts = append(opts, cel.Function("format."+name, cel.Overload("format-"+name, nil, formatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return formatOf(name) }))))
	}
	return opts
}

// Semantic versions.

var semverType = cel.OpaqueType("kubernetes.Semver")

type semverVal = opaque[semver.Version]

// parseSemver parses a semantic version; normalize first accepts a leading
// "v", missing minor and patch numbers and leading zeros.
func parseSemver(s string, normalize bool) (semver.Version, error) {
	if normalize {
		s = normalizeSemver(s)
	}
	return semver.Parse(s)
}

func normalizeSemver(s string) string {
	s = strings.TrimPrefix(s, "v")
	core, suffix := s, ""
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		core, suffix = s[:i], s[i:]
	}
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return s
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	for i, p := range parts {
		if trimmed := strings.TrimLeft(p, "0"); trimmed != p {
			if trimmed == "" {
				trimmed = "0"
			}
			parts[i] = trimmed
		}
	}
	return strings.Join(parts, ".") + suffix
}

func semverOf(v semver.Version) semverVal {
	return semverVal{typ: semverType, v: v, eq: semver.Version.Equals}
}

func semverLibrary() []cel.EnvOption {
	parse := func(s types.String, normalize bool) ref.Val {
		v, err := parseSemver(string(s), normalize)
		if err != nil {
			return types.NewErr("%v", err)
		}
		return semverOf(v)
	}
	isSemver := func(s types.String, normalize bool) ref.Val {
		_, err := parseSemver(string(s), normalize)
		return types.Bool(err == nil)
	}
	part := func(name string, f func(semver.Version) uint64) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("semver_"+name, []*cel.Type{semverType}, cel.IntType,
			unary(func(v semverVal) ref.Val { return types.Int(f(v.v)) })))
	}
	return []cel.EnvOption{
		cel.Function("isSemver",
			cel.Overload("is_semver_string", []*cel.Type{cel.StringType}, cel.BoolType,
				unary(func(s types.String) ref.Val { return isSemver(s, false) })),
			cel.Overload("is_semver_string_bool", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType,
				binary(func(s types.String, n types.Bool) ref.Val { return isSemver(s, bool(n)) }))),
		cel.Function("semver",
			cel.Overload("string_to_semver", []*cel.Type{cel.StringType}, semverType,
				unary(func(s types.String) ref.Val { return parse(s, false) })),
			cel.Overload("string_bool_to_semver", []*cel.Type{cel.StringType, cel.BoolType}, semverType,
				binary(func(s types.String, n types.Bool) ref.Val { return parse(s, bool(n)) }))),
		part("major", func(v semver.Version) uint64 { return v.Major }),
		part("minor", func(v semver.Version) uint64 { return v.Minor }),
		part("patch", func(v semver.Version) uint64 { return v.Patch }),
		cel.Function("isGreaterThan", cel.MemberOverload("semver_is_greater_than", []*cel.Type{semverType, semverType}, cel.BoolType,
			binary(func(a, b semverVal) ref.Val { return types.Bool(a.v.GT(b.v)) }))),
		cel.Function("isLessThan", cel.MemberOverload("semver_is_less_than", []*cel.Type{semverType, semverType}, cel.BoolType,
			binary(func(a, b semverVal) ref.Val { return types.Bool(a.v.LT(b.v)) }))),
		cel.Function("compareTo", cel.MemberOverload("semver_compare_to", []*cel.Type{semverType, semverType}, cel.IntType,
			binary(func(a, b semverVal) ref.Val { return types.Int(a.v.Compare(b.v)) }))),
	}
}
