package typed_test

import (
	"reflect"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

// TestDecode_scannerAsDecoder decodes every seed as a few kinds, through the
// scanner (and the Decoder when it gives up) and through the Decoder alone:
// the results and errors must be the same.
func TestDecode_scannerAsDecoder(t *testing.T) {
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range typed.Seeds {
		compareDecode(t, schemas, body)
	}
}

func FuzzDecode_scannerAsDecoder(f *testing.F) {
	for _, body := range typed.Seeds {
		f.Add(body)
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) { compareDecode(t, schemas, body) })
}

func compareDecode(t *testing.T, schemas map[string]*spec.Schema, body string) {
	for _, def := range []string{"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.apps.v1.Deployment"} {
		got, gotErr := typed.Decode(schemas, def, []byte(body))
		want, wantErr := typed.DecodeWithDecoder(schemas, def, []byte(body))
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%s %q: error %v, the decoder's %v", def, body, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %q:\n got %#v\nwant %#v", def, body, got, want)
		}
	}
}
