package server

import (
	"encoding/base64"
	"math/rand/v2"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/structural"
)

// object is a decoded Kubernetes object.
type object = map[string]any

// metadata returns obj's metadata map, creating it if missing.
func metadata(obj object) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// finalizers returns obj's finalizers.
func finalizers(obj object) []string {
	list, _ := metadata(obj)["finalizers"].([]any)
	out := make([]string, 0, len(list))
	for _, f := range list {
		if s, ok := f.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// generatedNameChars are the characters kube-apiserver draws generated name
// suffixes from (no vowels, so no words; no look-alike characters).
const generatedNameChars = "bcdfghjklmnpqrstvwxz2456789"

// GenerateName returns prefix with a random suffix, as kube-apiserver
// completes a generateName.
func GenerateName(prefix string) string {
	const maxNameLength, suffixLength = 63, 5
	if len(prefix) > maxNameLength-suffixLength {
		prefix = prefix[:maxNameLength-suffixLength]
	}
	b := make([]byte, suffixLength)
	for i := range b {
		b[i] = generatedNameChars[rand.IntN(len(generatedNameChars))]
	}
	return prefix + string(b)
}

// normalizeSecret folds stringData into data (base64) and defaults the type,
// as the Secret's API conversion does.
func normalizeSecret(obj object) {
	if sd, ok := obj["stringData"].(map[string]any); ok {
		data, _ := obj["data"].(map[string]any)
		if data == nil {
			data = map[string]any{}
		}
		for k, v := range sd {
			if s, ok := v.(string); ok {
				data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			}
		}
		obj["data"] = data
	}
	delete(obj, "stringData")
	if t, _ := obj["type"].(string); t == "" {
		obj["type"] = "Opaque"
	}
}

func deepCopyObject(obj object) object { return structural.DeepCopy(obj).(map[string]any) }

// deleting reports whether obj is being deleted.
func deleting(obj object) bool { return metadata(obj)["deletionTimestamp"] != nil }

// int64Of reads an integer field of a decoded object (0 if it is none).
func int64Of(v any) int64 {
	n, _ := jsonmap.IntOf(v)
	return n
}
