package object_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/object"
)

// BenchmarkHandler_ManagedFields renders the fields view of an object with
// n data keys and a keyed list of n items, owned by two managers.
func BenchmarkHandler_ManagedFields(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data, list := map[string]any{}, []any{}
			fData, fList := map[string]any{}, map[string]any{}
			for i := range n {
				k := fmt.Sprintf("key-%04d", i)
				data[k] = "value"
				fData["f:"+k] = map[string]any{}
				list = append(list, map[string]any{"name": k, "image": "x"})
				fList[`k:{"name":"`+k+`"}`] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:image": map[string]any{}}
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "big", "namespace": "default", "managedFields": []any{
					map[string]any{"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
						"fieldsV1": map[string]any{"f:data": fData}},
					map[string]any{"manager": "b", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
						"fieldsV1": map[string]any{"f:spec": map[string]any{"f:containers": fList}}},
				}},
				"data": data, "spec": map[string]any{"containers": list}}
			body, _ := json.Marshal(obj)
			api := fakeapi.New()
			api.LoadDiscovery(b, "../../server/testdata/oracle/discovery")
			api.Set("/api/v1/namespaces/default/configmaps/big", http.StatusOK, string(body))
			h := object.New(api, nil)
			target := object.URL("v1/configmaps", "default", "big", object.TabFields)
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
