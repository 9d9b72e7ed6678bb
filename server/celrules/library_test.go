package celrules

import (
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// TestLibrary evaluates each implemented Kubernetes CEL function; the
// expectations are the Kubernetes CEL libraries' documented results (and
// the crd-cel-library scenario checks a selection against kube-apiserver).
func TestLibrary(t *testing.T) {
	p, err := newProvider()
	if err != nil {
		t.Fatal(err)
	}
	env, err := newEnv(p, types.DynType, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr string
		want any // a Go value, or an error message
	}{
		{"[1, 2, 3].isSorted()", true},
		{"[3, 1].isSorted()", false},
		{"['a', 'b'].isSorted()", true},
		{"[1, 2, 3].sum()", int64(6)},
		{"[1.5, 2.5].sum()", 4.0},
		{"[3, 1, 2].min()", int64(1)},
		{"['b', 'a'].max()", "b"},
		{"[1, 2, 1].indexOf(1)", int64(0)},
		{"[1, 2, 1].lastIndexOf(1)", int64(2)},
		{"[1, 2].indexOf(5)", int64(-1)},
		{"dyn([]).min()", "min called on empty list"},
		{"'abc 123 45'.find('[0-9]+')", "123"},
		{"'abc'.find('[0-9]+')", ""},
		{"'a1b2c3'.findAll('[0-9]')", []any{"1", "2", "3"}},
		{"'a1b2c3'.findAll('[0-9]', 2)", []any{"1", "2"}},
		{"url('https://example.com:8080/a%20b?k=v&k=w').getHost()", "example.com:8080"},
		{"url('https://example.com:8080/a').getHostname()", "example.com"},
		{"url('https://example.com:8080/a').getPort()", "8080"},
		{"url('https://example.com/a').getScheme()", "https"},
		{"url('https://example.com/a%20b').getEscapedPath()", "/a%20b"},
		{"url('https://example.com/?k=v&k=w').getQuery()['k']", []any{"v", "w"}},
		{"url('/absolute/path').getEscapedPath()", "/absolute/path"},
		{"isURL('https://example.com')", true},
		{"isURL('relative/path')", false},
		{"quantity('1Gi').isGreaterThan(quantity('1G'))", true},
		{"quantity('1').isLessThan(quantity('2'))", true},
		{"quantity('500m').isInteger()", false},
		{"quantity('2k').asInteger()", int64(2000)},
		{"quantity('1.5').asApproximateFloat()", 1.5},
		{"quantity('1').add(2) == quantity('3')", true},
		{"quantity('5').sub(quantity('2')).compareTo(quantity('3'))", int64(0)},
		{"sign(quantity('-500m'))", int64(-1)},
		{"isQuantity('1x')", false},
		{"isQuantity('100Mi')", true},
		{"ip('10.0.0.1').family()", int64(4)},
		{"ip('::1').family()", int64(6)},
		{"ip('::1').isLoopback()", true},
		{"ip('0.0.0.0').isUnspecified()", true},
		{"ip('fe80::1').isLinkLocalUnicast()", true},
		{"ip('8.8.8.8').isGlobalUnicast()", true},
		{"isIP('1.2.3')", false},
		{"ip.isCanonical('2001:db8::1')", true},
		{"ip.isCanonical('2001:DB8::1')", false},
		{"cidr('10.0.0.0/8').containsIP('10.1.2.3')", true},
		{"cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", false},
		{"cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", true},
		{"cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", false},
		{"cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", true},
		{"cidr('10.0.0.0/8').prefixLength()", int64(8)},
		{"cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", true},
		{"string(cidr('10.0.0.0/8'))", "10.0.0.0/8"},
		{"isCIDR('1.2.3.4/33')", false},
		{"format.dns1123Label().validate('ok-1').hasValue()", false},
		{"format.dns1035LabelPrefix().validate('9-').hasValue()", false},
		{"format.named('uuid').value().validate('x').value()", []any{"does not match the UUID format"}},
		{"format.named('bogus').hasValue()", false},
		{"isSemver('v1.2', true) && !isSemver('v1.2')", true},
		{"semver('1.2.3-alpha').isLessThan(semver('1.2.3'))", true},
		{"semver('01.2', true).major()", int64(1)},
		{"semver('x')", "No Major.Minor.Patch elements found"},
		{"semver('x', true)", `Invalid character(s) found in major number "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			ast, issues := env.Compile(tt.expr)
			if issues != nil && issues.Err() != nil {
				t.Fatal(issues.Err())
			}
			prg, err := env.Program(ast, cel.CostLimit(perCallLimit))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(map[string]any{"self": nil, "oldSelf": nil})
			if msg, ok := tt.want.(string); ok && err != nil {
				if err.Error() != msg {
					t.Fatalf("error %q, want %q", err, msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := out.ConvertToNative(reflect.TypeOf(tt.want))
			if err != nil {
				t.Fatalf("%v (%v)", err, out)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}
