package typed_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

const (
	configMap  = "io.k8s.api.core.v1.ConfigMap"
	pod        = "io.k8s.api.core.v1.Pod"
	secret     = "io.k8s.api.core.v1.Secret"
	service    = "io.k8s.api.core.v1.Service"
	deployment = "io.k8s.api.apps.v1.Deployment"
)

// The messages are kube-apiserver v1.35's answers to the same bodies (after
// its "<Kind> in version "v1" cannot be handled as a <Kind>: " prefix).
func TestDecode_errors(t *testing.T) {
	tests := []struct {
		def, body, want string
	}{
		{deployment, `{"spec":{"replicas":"3"}}`, `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`},
		{deployment, `{"spec":{"replicas":1.5}}`, `json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32`},
		{deployment, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":5}]}}}}`, `json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string`},
		{deployment, `{"spec":5}`, `json: cannot unmarshal number into Go struct field Deployment.spec of type v1.DeploymentSpec`},
		{pod, `{"spec":{"containers":{}}}`, `json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container`},
		{pod, `{"spec":{"containers":[5]}}`, `json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type v1.Container`},
		{pod, `{"spec":{"containers":[{"ports":[{"containerPort":3000000000}]}]}}`, `json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32`},
		{pod, `{"spec":{"hostNetwork":"x"}}`, `json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool`},
		{pod, `{"metadata":{"creationTimestamp":"yesterday"}}`, `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{pod, `{"metadata":{"creationTimestamp":5}}`, `json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string`},
		{pod, `{"spec":{"containers":[{"resources":{"limits":{"cpu":"lots"}}}]}}`, `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{pod, `{"spec":{"containers":[{"resources":{"limits":{"cpu":[1]}}}]}}`, `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{configMap, `{"metadata":{"labels":{"a":1}},"data":{"a":1}}`, `json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`},
		{configMap, `{"data":{"a":"1","b":2,"c":true}}`, `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{configMap, `{"data":[1,2]}`, `json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string`},
		{configMap, `{"binaryData":{"b":"!!"}}`, `illegal base64 data at input byte 0`},
		{secret, `{"data":{"a":"not base64!"}}`, `illegal base64 data at input byte 3`},
		{service, `{"spec":{"ports":[{"port":80,"targetPort":true}]}}`, `json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32`},
		{service, `{"spec":{"ports":[{"port":80,"targetPort":1.5}]}}`, `json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32`},
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := typed.Decode(schemas, tt.def, []byte(tt.body))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s %s:\n got %v\nwant %s", tt.def, tt.body, err, tt.want)
		}
	}
}

func TestDecode_unknownAndDuplicateFields(t *testing.T) {
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		def, body   string
		fieldErrors []string
		wantObject  string // a field that must survive
	}{
		{configMap, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","bar":2},"data":{"a":"1"},"foo":1}`,
			[]string{`unknown field "metadata.bar"`, `unknown field "foo"`}, "data"},
		{configMap, `{"metadata":{"name":"c"},"data":{"a":"1"},"data":{"b":"2"}}`, []string{`duplicate field "data"`}, "data"},
		{pod, `{"metadata":{"name":"p","annotations":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i","foo":1},{"name":"d","image":"i","foo":2,"foo":3}],"nodeSelector":{"a":"b"},"volumes":[{"name":"v","configMap":{"name":"x","zzz":1}}]}}`,
			[]string{`unknown field "spec.containers[0].foo"`, `unknown field "spec.containers[1].foo"`, `unknown field "spec.volumes[0].configMap.zzz"`}, "spec"},
		{pod, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","foo":1}],"replicas":"x"}}`,
			[]string{`unknown field "spec.containers[0].foo"`, `unknown field "spec.replicas"`}, "spec"},
	}
	// An object of many keys: a repeat is found among the first ones and
	// the later ones alike.
	var many strings.Builder
	many.WriteString(`{"metadata":{"name":"c"},"data":{`)
	for i := range 20 {
		fmt.Fprintf(&many, `"k%02d":"v",`, i)
	}
	many.WriteString(`"k00":"w","k18":"w"}}`)
	tests = append(tests, struct {
		def, body   string
		fieldErrors []string
		wantObject  string
	}{configMap, many.String(), []string{`duplicate field "data.k00"`, `duplicate field "data.k18"`}, "data"})
	for _, tt := range tests {
		res, err := typed.Decode(schemas, tt.def, []byte(tt.body))
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if !slices.Equal(res.FieldErrors, tt.fieldErrors) {
			t.Errorf("%s:\n got %q\nwant %q", tt.body, res.FieldErrors, tt.fieldErrors)
		}
		if _, ok := res.Object[tt.wantObject]; !ok {
			t.Errorf("%s: %s missing from %v", tt.body, tt.wantObject, res.Object)
		}
		if strings.Contains(toString(res.Object), "foo") || strings.Contains(toString(res.Object), "zzz") {
			t.Errorf("%s: unknown fields kept: %v", tt.body, res.Object)
		}
	}
}

func TestDecode_dropsNulls(t *testing.T) {
	schemas, _ := fieldmanager.Schemas()
	res, err := typed.Decode(schemas, configMap, []byte(`{"metadata":{"name":"c","labels":null},"data":null,"immutable":null,"binaryData":{"a":"YQ=="}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := toString(res.Object); got != `map[binaryData:map[a:YQ==] metadata:map[name:c]]` {
		t.Errorf("object %s", got)
	}
}

func TestDecode_keepsFreeFormAndIntOrString(t *testing.T) {
	schemas, _ := fieldmanager.Schemas()
	res, err := typed.Decode(schemas, service, []byte(`{"metadata":{"name":"s","managedFields":[{"manager":"m","fieldsV1":{"f:data":{".":{}}}}]},"spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81,"targetPort":8081}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FieldErrors) != 0 || !strings.Contains(toString(res.Object), "f:data") || !strings.Contains(toString(res.Object), "targetPort:8081") {
		t.Errorf("field errors %q, object %s", res.FieldErrors, toString(res.Object))
	}
}

func toString(v any) string { return fmt.Sprint(v) }
