package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/gnostic-models/compiler"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v2Sections is the v2 document with the two sections custom resources
// add to held apart; it encodes back to the recorded bytes (map keys in
// order, HTML characters unescaped, as kube-apiserver writes them).
type v2Sections struct {
	Swagger             json.RawMessage            `json:"swagger"`
	Info                json.RawMessage            `json:"info"`
	Paths               map[string]json.RawMessage `json:"paths"`
	Definitions         map[string]json.RawMessage `json:"definitions"`
	Parameters          json.RawMessage            `json:"parameters"`
	SecurityDefinitions json.RawMessage            `json:"securityDefinitions"`
	Security            json.RawMessage            `json:"security"`
}

// customV2 is the v2 document with the custom resources of the moment,
// made on first demand, and its protobuf form likewise.
type customV2 struct {
	types []CustomType

	once sync.Once
	json []byte
	etag string
	// paths and definitions are the document's additions.
	paths, definitions map[string]json.RawMessage
	err                error

	protoOnce sync.Once
	protobuf  []byte
	protoErr  error
}

func (c *customV2) document() ([]byte, string, error) {
	c.once.Do(func() {
		var doc v2Sections
		if c.err = json.Unmarshal(recordedV2, &doc); c.err != nil {
			return
		}
		added := v2Sections{Paths: map[string]json.RawMessage{}, Definitions: map[string]json.RawMessage{}}
		for _, t := range c.types {
			if c.err = addV2(&added, t); c.err != nil {
				return
			}
		}
		maps.Copy(doc.Paths, added.Paths)
		maps.Copy(doc.Definitions, added.Definitions)
		c.paths, c.definitions = added.Paths, added.Definitions
		if c.json, c.err = encode(doc); c.err != nil {
			return
		}
		sum := sha512.Sum512(c.json)
		c.etag = `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	})
	return c.json, c.etag, c.err
}

// proto is the protobuf form: the recorded document's with the additions
// parsed by gnostic and inserted in order, as gnostic would parse the whole
// JSON document (ten times slower).
func (c *customV2) proto() ([]byte, error) {
	c.protoOnce.Do(func() {
		base, err := recordedV2Proto()
		if err != nil {
			c.protoErr = err
			return
		}
		var doc openapi_v2.Document
		if c.protoErr = proto.Unmarshal(base, &doc); c.protoErr != nil {
			return
		}
		for name, raw := range c.paths {
			item, err := parseV2(raw, openapi_v2.NewPathItem)
			if err != nil {
				c.protoErr = err
				return
			}
			doc.Paths.Path = insertNamed(doc.Paths.Path, &openapi_v2.NamedPathItem{Name: name, Value: item}, (*openapi_v2.NamedPathItem).GetName)
		}
		for name, raw := range c.definitions {
			schema, err := parseV2(raw, openapi_v2.NewSchema)
			if err != nil {
				c.protoErr = err
				return
			}
			doc.Definitions.AdditionalProperties = insertNamed(doc.Definitions.AdditionalProperties, &openapi_v2.NamedSchema{Name: name, Value: schema}, (*openapi_v2.NamedSchema).GetName)
		}
		c.protobuf, c.protoErr = proto.Marshal(&doc)
	})
	return c.protobuf, c.protoErr
}

// parseV2 parses one part of a v2 document with gnostic.
func parseV2[T any](raw json.RawMessage, parse func(*yaml.Node, *compiler.Context) (T, error)) (T, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		var zero T
		return zero, err
	}
	root := node.Content[0]
	return parse(root, compiler.NewContextWithExtensions("$root", root, nil, nil))
}

// insertNamed inserts e into list, sorted by name as the JSON document's
// keys are.
func insertNamed[E any](list []E, e E, name func(E) string) []E {
	i, found := slices.BinarySearchFunc(list, name(e), func(x E, n string) int { return strings.Compare(name(x), n) })
	if found {
		list[i] = e
		return list
	}
	return slices.Insert(list, i, e)
}

// SetCustomV2 adds the custom resources types describe (every served
// version of every CRD) to /openapi/v2, as kube-apiserver merges them into
// its one document; with none, the recorded document is served.
func (h *Handler) SetCustomV2(types []CustomType) {
	if len(types) == 0 {
		h.v2.Store(nil)
		return
	}
	h.v2.Store(&customV2{types: types})
}

// encode is json.Marshal without HTML escaping.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// addV2 adds a custom type's paths (as kube-apiserver v1.35.4 describes
// them, recorded like v3's) and its kind's and list kind's definitions.
func addV2(doc *v2Sections, t CustomType) error {
	items, err := pathItems("v2-", t)
	if err != nil {
		return err
	}
	for path, item := range items {
		doc.Paths[path] = item
	}
	name := DefinitionName(t.GVK)
	listGVK := t.GVK.GroupVersion().WithKind(t.ListKindName)
	kind, err := v2Definition(v2Kind(t))
	if err != nil {
		return err
	}
	list, err := v2Definition(listSchema(t, map[string]any{"$ref": "#/definitions/" + name},
		map[string]any{"description": listMetadataDoc, "$ref": "#/definitions/" + metaPrefix + "ListMeta"}))
	if err != nil {
		return err
	}
	doc.Definitions[name], doc.Definitions[DefinitionName(listGVK)] = kind, list
	return nil
}

// v2Definition encodes a schema as kube-openapi orders its fields.
func v2Definition(schema map[string]any) (json.RawMessage, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s spec.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	out, err := json.Marshal(&s)
	return unescapeHTML(out), err
}

// unescapeHTML undoes the escapes of <, > and & that kube-openapi's
// marshaling adds to JSON strings and kube-apiserver's does not.
func unescapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c", "003e", "0026":
				r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 8)
				out = append(out, byte(r))
				i += 5
				continue
			}
		}
		out = append(out, b[i], b[i+1]) // an escape of its own
		i++
	}
	return out
}

// v2Kind is a custom kind's schema as kube-apiserver publishes it in v2:
// what v2 clients (kubectl's old validation) cannot take is dropped. A
// kind whose root keeps unknown fields is just an object.
func v2Kind(t CustomType) map[string]any {
	kind := map[string]any{}
	if b, err := json.Marshal(t.Schema); err == nil {
		_ = json.Unmarshal(b, &kind) // a copy: an object's JSON is an object
	}
	if keep, _ := kind["x-kubernetes-preserve-unknown-fields"].(bool); keep {
		kind = map[string]any{}
	} else {
		toV2(kind)
		props, _ := kind["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props["apiVersion"] = map[string]any{"description": apiVersionDoc, "type": "string"}
		props["kind"] = map[string]any{"description": kindDoc, "type": "string"}
		props["metadata"] = map[string]any{"description": objectMetadataDoc, "$ref": "#/definitions/" + metaPrefix + "ObjectMeta"}
		kind["properties"] = props
	}
	kind["type"] = "object"
	kind["x-kubernetes-group-version-kind"] = gvkExtension(t.GVK)
	return kind
}

// toV2 converts a structural schema, in place, to what kube-apiserver
// publishes in v2: no defaults nor logical junctors; a nullable value, and
// one that keeps unknown fields, untyped and without its fields or items
// (and a nullable field not required); an array without items untyped.
func toV2(s map[string]any) {
	for _, k := range []string{"default", "allOf", "anyOf", "oneOf", "not"} {
		delete(s, k)
	}
	if nullable, _ := s["nullable"].(bool); nullable {
		delete(s, "type")
		delete(s, "items")
		delete(s, "properties")
	}
	delete(s, "nullable")
	if keep, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); keep {
		for _, k := range []string{"type", "items", "properties", "additionalProperties"} {
			delete(s, k)
		}
	}
	if s["type"] == "array" && s["items"] == nil {
		delete(s, "type")
	}
	props, _ := s["properties"].(map[string]any)
	if required, ok := s["required"].([]any); ok {
		s["required"] = slices.DeleteFunc(required, func(r any) bool {
			name, _ := r.(string)
			p, _ := props[name].(map[string]any)
			nullable, _ := p["nullable"].(bool)
			return nullable
		})
		if len(s["required"].([]any)) == 0 {
			delete(s, "required")
		}
	}
	for _, p := range props {
		if m, ok := p.(map[string]any); ok {
			toV2(m)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			toV2(m)
		}
	}
}
