package validation

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// ConfigMap checks a ConfigMap's keys: file names, none in both data and
// binaryData.
func ConfigMap(obj Object) field.ErrorList {
	return configKeys(obj, "data", "binaryData")
}

// ConfigMapUpdate checks a ConfigMap's update: what an immutable one may
// not change, then the ConfigMap as new.
func ConfigMapUpdate(obj, old Object) field.ErrorList {
	return append(immutableData(obj, old, "data", "binaryData"), ConfigMap(obj)...)
}

// secretKeys are the keys each Secret type requires, in the order
// kube-apiserver reports them missing.
var secretKeys = map[string][]string{
	"kubernetes.io/tls":              {"tls.crt", "tls.key"},
	"kubernetes.io/dockercfg":        {".dockercfg"},
	"kubernetes.io/dockerconfigjson": {".dockerconfigjson"},
	"kubernetes.io/ssh-auth":         {"ssh-privatekey"},
}

// Secret checks a Secret (its stringData already folded into data): its
// keys, and what its type requires: the keys (a docker config's being a
// JSON object), the service account a token is for.
func Secret(obj Object) field.ErrorList {
	errs := configKeys(obj, "data")
	data := jsonmap.Child(obj, "data")
	dataPath := field.NewPath("data")
	switch typ, _ := obj["type"].(string); typ {
	case "kubernetes.io/service-account-token":
		const key = "kubernetes.io/service-account.name"
		if str(jsonmap.Child(jsonmap.Child(obj, "metadata"), "annotations"), key) == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(key), ""))
		}
	case "kubernetes.io/basic-auth":
		// Either may be empty, but one must be there.
		_, user := data["username"]
		_, password := data["password"]
		if !user && !password {
			errs = append(errs, field.Required(dataPath.Key("username"), ""), field.Required(dataPath.Key("password"), ""))
		}
	case "kubernetes.io/ssh-auth":
		if s, _ := data["ssh-privatekey"].(string); s == "" {
			errs = append(errs, field.Required(dataPath.Key("ssh-privatekey"), ""))
		}
	default:
		for _, key := range secretKeys[typ] {
			v, ok := data[key]
			if !ok {
				errs = append(errs, field.Required(dataPath.Key(key), ""))
				continue
			}
			if key != ".dockercfg" && key != ".dockerconfigjson" {
				continue
			}
			s, _ := v.(string)
			b, _ := base64.StdEncoding.DecodeString(s)
			if err := json.Unmarshal(b, &map[string]any{}); err != nil {
				errs = append(errs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
			}
		}
	}
	return errs
}

// SecretUpdate checks a Secret's update: what may not change (its type,
// an immutable Secret's data), then the Secret as new.
func SecretUpdate(obj, old Object) field.ErrorList {
	var errs field.ErrorList
	if !reflect.DeepEqual(obj["type"], old["type"]) {
		errs = append(errs, field.Invalid(field.NewPath("type"), obj["type"], "field is immutable"))
	}
	errs = append(errs, immutableData(obj, old, "data")...)
	return append(errs, Secret(obj)...)
}

// immutableData checks that an update of an immutable ConfigMap or Secret
// keeps it immutable and changes none of its data fields.
func immutableData(obj, old Object, fields ...string) field.ErrorList {
	if old["immutable"] != true {
		return nil
	}
	var errs field.ErrorList
	if obj["immutable"] != true {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	for _, f := range fields {
		if !reflect.DeepEqual(emptyAsNil(obj[f]), emptyAsNil(old[f])) {
			errs = append(errs, field.Forbidden(field.NewPath(f), "field is immutable when `immutable` is set"))
		}
	}
	return errs
}

// emptyAsNil treats an empty map as none, as a Go map compares after
// decoding.
func emptyAsNil(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return v
}

// configKeys checks the keys of a ConfigMap's or Secret's data fields:
// file names, those of the first field in none of the others.
func configKeys(obj Object, fields ...string) field.ErrorList {
	var errs field.ErrorList
	for i, f := range fields {
		for _, k := range slices.Sorted(maps.Keys(jsonmap.Child(obj, f))) {
			path := field.NewPath(f).Key(k)
			for _, msg := range utilvalidation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(path, k, msg))
			}
			if i > 0 {
				continue
			}
			for _, other := range fields[1:] {
				if _, dup := jsonmap.Child(obj, other)[k]; dup {
					errs = append(errs, field.Invalid(path, k, "duplicate of key present in "+other))
				}
			}
		}
	}
	return errs
}
