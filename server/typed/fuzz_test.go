package typed_test

import (
	"testing"

	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

// FuzzDecode: any body gets a result or an error, never a panic.
func FuzzDecode(f *testing.F) {
	for _, body := range []string{
		`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":5,"resources":{"limits":{"cpu":"1"}}}]}}}}`,
		`{"metadata":{"labels":{"a":null},"managedFields":[{"fieldsV1":{}}]},"spec":{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":"25%"}}}}`,
		`{"a":[1,{"b":[null]}]}`, `[]`, `{`, `{"spec":`, `"x"`,
	} {
		f.Add(body)
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		typed.Decode(schemas, "io.k8s.api.apps.v1.Deployment", []byte(body))
	})
}
