package authn_test

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"kubeplay/server/authn"
)

func TestParseTokenFile(t *testing.T) {
	tokens, err := authn.ParseTokenFile(strings.NewReader("# comment\nt1,alice,u1,\"devs,testers\"\nt2,bob,u2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]authn.User{
		"t1": {Name: "alice", UID: "u1", Groups: []string{"devs", "testers"}},
		"t2": {Name: "bob", UID: "u2"},
	}
	if !reflect.DeepEqual(tokens, want) {
		t.Errorf("got %+v, want %+v", tokens, want)
	}
	for _, bad := range []string{"t1,alice\n", ",alice,u1\n", "t1,a,1\nt1,b,2\n", "t1,\"alice\n"} {
		if _, err := authn.ParseTokenFile(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestAuthenticator_Authenticate(t *testing.T) {
	tokens := map[string]authn.User{"t1": {Name: "alice", UID: "u1", Groups: []string{"devs"}}}
	for _, tc := range []struct {
		name   string
		opts   authn.Options
		header string
		want   *authn.User
	}{
		{"token", authn.Options{Tokens: tokens}, "Bearer t1", &authn.User{Name: "alice", UID: "u1", Groups: []string{"devs", "system:authenticated"}}},
		{"scheme is case-insensitive", authn.Options{Tokens: tokens}, "bearer t1", &authn.User{Name: "alice", UID: "u1", Groups: []string{"devs", "system:authenticated"}}},
		{"unknown token", authn.Options{Tokens: tokens}, "Bearer t2", nil},
		{"anonymous", authn.Options{Tokens: tokens}, "", &authn.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
		{"anonymous admin", authn.Options{AnonymousGroups: []string{"system:masters"}}, "", &authn.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated", "system:masters"}}},
		{"basic credentials are anonymous", authn.Options{}, "Basic YTpi", &authn.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
		{"anonymous denied", authn.Options{DenyAnonymous: true}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			got, err := authn.New(tc.opts).Authenticate(r)
			if tc.want == nil {
				if err != authn.ErrUnauthorized {
					t.Errorf("got %+v, %v; want ErrUnauthorized", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestServiceAccount(t *testing.T) {
	for _, tc := range []struct {
		user, ns, name string
		ok             bool
	}{
		{"system:serviceaccount:dev:sa1", "dev", "sa1", true},
		{"system:serviceaccount:dev", "", "", false},
		{"system:serviceaccount::sa1", "", "", false},
		{"system:serviceaccount:a:b:c", "", "", false},
		{"alice", "", "", false},
	} {
		ns, name, ok := authn.ServiceAccount(tc.user)
		if ns != tc.ns || name != tc.name || ok != tc.ok {
			t.Errorf("ServiceAccount(%q) = %q, %q, %v", tc.user, ns, name, ok)
		}
	}
}
