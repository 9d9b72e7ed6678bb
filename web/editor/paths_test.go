package editor

import (
	"encoding/json"
	"testing"
)

func TestPaths(t *testing.T) {
	var obj any
	_ = json.Unmarshal([]byte(`{"data":{"a":"1","b":"2"},"spec":{"containers":[{"name":"c","image":"x"},{"name":"d","image":"y"}],"finalizers":["f1","f2"]}}`), &obj)
	for _, tt := range []struct {
		path string
		want string
	}{
		{`.data.a`, `"1"`},
		{`.spec.containers[name="d"].image`, `"y"`},
		{`.spec.finalizers[="f2"]`, `"f2"`},
		{`.spec.containers[0].name`, `"c"`},
	} {
		p, err := parsePath(tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		v, ok := get(obj, p)
		if b, _ := json.Marshal(v); !ok || string(b) != tt.want {
			t.Errorf("get %s = %s (%v), want %s", tt.path, b, ok, tt.want)
		}
	}
	p, _ := parsePath(`.spec.containers[name="c"].image`)
	if !set(obj, p, "z") {
		t.Fatal("set failed")
	}
	p2, _ := parsePath(`.data.a`)
	p3, _ := parsePath(`.spec.finalizers[="f1"]`)
	if !drop(obj, p2) || !drop(obj, p3) {
		t.Fatal("drop failed")
	}
	b, _ := json.Marshal(obj)
	if want := `{"data":{"b":"2"},"spec":{"containers":[{"image":"z","name":"c"},{"image":"y","name":"d"}],"finalizers":["f2"]}}`; string(b) != want {
		t.Errorf("after set and drop: %s", b)
	}
}
