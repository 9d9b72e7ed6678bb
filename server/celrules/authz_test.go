package celrules

import (
	"errors"
	"testing"

	"github.com/google/cel-go/common/types"
)

// recorder allows what its allow says and records every check.
type recorder struct {
	checks []AuthzCheck
	allow  func(AuthzCheck) (bool, string, error)
}

func (r *recorder) Authorize(c AuthzCheck) (bool, string, error) {
	r.checks = append(r.checks, c)
	return r.allow(c)
}

func TestAuthzLibrary(t *testing.T) {
	request := AuthzCheck{Group: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "d"}
	tests := []struct {
		expr string
		want any
		// checked is the check the expression asks for.
		checked AuthzCheck
	}{
		{"authorizer.requestResource.check('update').allowed()", true,
			AuthzCheck{Group: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "d", Verb: "update"}},
		{"authorizer.group('').resource('secrets').namespace('x').name('s').check('get').reason()", "by a rule",
			AuthzCheck{Resource: "secrets", Namespace: "x", Name: "s", Verb: "get"}},
		{"authorizer.path('/healthz').check('get').errored()", false, AuthzCheck{Path: "/healthz", Verb: "get"}},
		{"authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').labelSelector('a=b').check('list').allowed()", true,
			AuthzCheck{ServiceAccountNamespace: "ns", ServiceAccountName: "sa", Group: "apps", Resource: "deployments", Verb: "list"}},
		{"authorizer.path('/broken').check('get').error()", "no answer", AuthzCheck{Path: "/broken", Verb: "get"}},
	}
	env, err := AdmissionEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			r := &recorder{allow: func(c AuthzCheck) (bool, string, error) {
				if c.Path == "/broken" {
					return false, "", errors.New("no answer")
				}
				return true, "by a rule", nil
			}}
			prg, err := AdmissionProgram(env, tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(AuthorizerVars(r, request))
			if err != nil {
				t.Fatal(err)
			}
			if out.Value() != tt.want {
				t.Errorf("= %v, want %v", out.Value(), tt.want)
			}
			if len(r.checks) != 1 || r.checks[0] != tt.checked {
				t.Errorf("checks %+v, want [%+v]", r.checks, tt.checked)
			}
		})
	}
}

// TestAuthzLibrary_Cost checks that a check costs what kube-apiserver
// counts: two fit in an expression, three do not.
func TestAuthzLibrary_Cost(t *testing.T) {
	env, err := AdmissionEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	deny := &recorder{allow: func(AuthzCheck) (bool, string, error) { return false, "", nil }}
	for expr, ok := range map[string]bool{
		"authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed()":                                                 true,
		"authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()": false,
	} {
		prg, err := AdmissionProgram(env, expr, types.BoolType)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = prg.Eval(AuthorizerVars(deny, AuthzCheck{}))
		if (err == nil) != ok {
			t.Errorf("%s: error %v, want an error: %v", expr, err, !ok)
		}
	}
}
