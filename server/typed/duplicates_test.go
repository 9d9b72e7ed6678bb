package typed

import (
	"slices"
	"testing"
)

func TestDuplicates(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"none", `{"a":1,"b":{"a":2}}`, nil},
		{"top", `{"a":1,"a":2}`, []string{`duplicate field "a"`}},
		{"nested and map keys, in order", `{"metadata":{"name":"x","name":"y"},"spec":{"size":1,"tags":{"a":"x","a":"y"},"size":2}}`,
			[]string{`duplicate field "metadata.name"`, `duplicate field "spec.tags.a"`, `duplicate field "spec.size"`}},
		{"in lists", `{"spec":{"ports":[{"port":1},{"name":"a","name":"b"}]}}`, []string{`duplicate field "spec.ports[1].name"`}},
		{"thrice", `{"a":1,"a":2,"a":3}`, []string{`duplicate field "a"`, `duplicate field "a"`}},
		{"not JSON", `{"a":1,"a":`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Duplicates([]byte(tt.body)); !slices.Equal(got, tt.want) {
				t.Errorf("Duplicates(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}
