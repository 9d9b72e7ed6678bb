package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

// maxBodyBytes is kube-apiserver's limit on a request body (3 MiB).
const maxBodyBytes = 3 << 20

// readBody reads and decodes a request body into an object of kind r.Kind,
// as kube-apiserver decodes it into its Go type: values of the wrong type
// are rejected, unknown and duplicate fields dropped and reported per the
// request's fieldValidation (warnings go into w's headers).
func readBody(r *http.Request, res *catalog.Resource) (object, error) {
	validation, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	mt, err := encoding.BodyMediaType(r)
	if err != nil {
		return nil, err
	}
	body, err := readBytes(r)
	if err != nil {
		return nil, err
	}
	var cborBody []byte
	if mt == encoding.CBOR {
		// Decoded from here on as the JSON it stands for.
		cborBody = body
		j, err := encoding.CBORObjectToJSON(body)
		if err != nil {
			return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): unable to determine group/version/kind: %v (%s)", res.Kind, err, excerpt(body))
		}
		body, mt = j, encoding.JSON
	}
	// A built-in type's JSON is decoded once, as its Go type (decodeTyped
	// below); only its apiVersion and kind are read first.
	var obj object
	var apiVersion, kind string
	if mt == encoding.JSON && res.Custom == nil {
		apiVersion, kind, err = encoding.TypeMeta(body)
	} else if obj, err = encoding.DecodeObject(mt, body); err == nil {
		apiVersion, _ = obj["apiVersion"].(string)
		kind, _ = obj["kind"].(string)
	}
	var yamlErr *encoding.YAMLSyntaxError
	switch {
	case errors.As(err, &yamlErr), err != nil && mt == encoding.Protobuf:
		return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): %v (%s)", res.Kind, err, excerpt(body))
	case err != nil:
		return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)", res.Kind, err, excerpt(body))
	}
	if apiVersion == "" {
		apiVersion = res.APIVersion()
	}
	if kind == "" {
		kind = res.Kind
	}
	version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
	// kube-apiserver decodes a protobuf body of any built-in kind, and then
	// fails to convert it.
	decodable := mt == encoding.Protobuf && encoding.HasProtobuf(apiVersion, kind)
	switch {
	case apiVersion != res.APIVersion() && res.Custom != nil:
		return nil, encoding.BadRequest("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, res.APIVersion())
	case apiVersion != res.APIVersion() && !decodable:
		return nil, encoding.BadRequest("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, version, res.Kind, kind, apiVersion)
	case kind != res.Kind || apiVersion != res.APIVersion():
		return nil, encoding.BadRequest("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion", kind, version, res.Kind, version, kind, internalPackage(res.Group), res.Kind)
	}
	// Protobuf bodies are typed already; custom objects are pruned and
	// validated by their CRD's schema (admitSchema).
	cannotHandle := fmt.Sprintf("%s in version %q cannot be handled as a %s", kind, version, res.Kind)
	switch {
	case mt == encoding.Protobuf:
	case res.Custom != nil:
		if err := reportCustomFieldErrors(r.Context(), res, mt, body, obj, validation, cannotHandle); err != nil {
			return nil, err
		}
	default:
		if obj, err = decodeTyped(r.Context(), res, mt, body, cborBody, validation, cannotHandle); err != nil {
			return nil, err
		}
	}
	obj["apiVersion"], obj["kind"] = apiVersion, kind
	return obj, nil
}

// decodeTyped decodes a JSON or YAML body as res's Go type would; for a
// body sent in CBOR, cborBody is what was sent.
func decodeTyped(ctx context.Context, res *catalog.Resource, mt string, body, cborBody []byte, validation, cannotHandle string) (object, error) {
	decoded, yamlDuplicates, err := decodeAs(res, mt, body, cannotHandle)
	if err != nil {
		return nil, err
	}
	fieldErrors := decoded.FieldErrors
	if cborBody != nil {
		// kube-apiserver's CBOR decoder refuses duplicate keys outright
		// and names one unknown field.
		fieldErrors = nil
		if msg := encoding.CBORUnknownField(cborBody, decoded.Unknown); msg != "" {
			fieldErrors = []string{msg}
		}
	}
	if err := reportFieldErrors(ctx, validation, yamlDuplicates, fieldErrors, cannotHandle); err != nil {
		return nil, err
	}
	return decoded.Object, nil
}

// decodeAs decodes a JSON or YAML body as res's Go type, with the keys a
// YAML body gives twice.
func decodeAs(res *catalog.Resource, mt string, body []byte, cannotHandle string) (typed.Result, encoding.YAMLDuplicateKeys, error) {
	defs, err := fieldmanager.Definitions()
	if err != nil {
		return typed.Result{}, nil, apierrors.NewInternalError(err)
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		return typed.Result{}, nil, apierrors.NewInternalError(err)
	}
	var yamlDuplicates encoding.YAMLDuplicateKeys
	if mt == encoding.YAML {
		yamlDuplicates = encoding.YAMLDuplicates(body)
		if body, err = yaml.YAMLToJSON(body); err != nil {
			return typed.Result{}, nil, encoding.BadRequest("%s: %v", cannotHandle, err)
		}
	}
	def, ok := defs[res.GroupVersionKind()]
	if !ok {
		return typed.Result{}, nil, apierrors.NewInternalError(fmt.Errorf("no schema for %v", res.GroupVersionKind()))
	}
	decoded, err := typed.Decode(schemas, def, body)
	if err != nil {
		return typed.Result{}, nil, encoding.BadRequest("%s: %v", cannotHandle, err)
	}
	return decoded, yamlDuplicates, nil
}

// fieldValidation is the request's fieldValidation parameter, checked as
// kube-apiserver checks it ("" means Warn).
func fieldValidation(r *http.Request) (string, error) {
	v := r.URL.Query().Get("fieldValidation")
	if errs := metav1validation.ValidateFieldValidation(field.NewPath("fieldValidation"), v); len(errs) > 0 {
		options := map[string]string{http.MethodPost: "CreateOptions", http.MethodPatch: "PatchOptions"}[r.Method]
		if options == "" {
			options = "UpdateOptions"
		}
		return "", errInvalidOptions(options, errs)
	}
	return v, nil
}

// reportCustomFieldErrors applies fieldValidation to the keys a custom
// object's JSON or YAML body gives twice. With Strict, its unknown fields
// are reported in the same error, as kube-apiserver's decoder does; else
// admitSchema reports them, on every write.
func reportCustomFieldErrors(ctx context.Context, res *catalog.Resource, mt string, body []byte, obj object, validation, cannotHandle string) error {
	var yamlDuplicates encoding.YAMLDuplicateKeys
	var fieldErrors []string
	switch mt {
	case encoding.YAML:
		yamlDuplicates = encoding.YAMLDuplicates(body)
	case encoding.JSON:
		fieldErrors = typed.Duplicates(body)
	}
	if validation == "Strict" && len(yamlDuplicates)+len(fieldErrors) > 0 {
		fieldErrors = append(fieldErrors, unknownFields(res.Custom.Schema.Prune(deepCopyObject(obj)))...)
	}
	return reportFieldErrors(ctx, validation, yamlDuplicates, fieldErrors, cannotHandle)
}

// reportFieldErrors applies fieldValidation to the keys a YAML body gives
// twice (yamlDuplicates) and to the unknown and duplicate fields of a body:
// a 400 with Strict, a warning each with Warn (the default), nothing with
// Ignore.
func reportFieldErrors(ctx context.Context, validation string, yamlDuplicates encoding.YAMLDuplicateKeys, fieldErrors []string, cannotHandle string) error {
	switch {
	case len(yamlDuplicates)+len(fieldErrors) == 0 || validation == "Ignore":
		return nil
	case validation == "Strict":
		if len(yamlDuplicates) > 0 {
			fieldErrors = append([]string{yamlDuplicates.Error()}, fieldErrors...)
		}
		return encoding.BadRequest("%s: strict decoding error: %s", cannotHandle, strings.Join(fieldErrors, ", "))
	}
	warn(ctx, slices.Concat(yamlDuplicates, fieldErrors)...)
	return nil
}

// readBytes reads a request body of at most maxBodyBytes.
func readBytes(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
	}
	return body, nil
}

// excerpt shows the start of a body that did not decode as kube-apiserver
// does: the text of what looks like a JSON object, the bytes in hex (30 at
// most) of anything else.
func excerpt(body []byte) string {
	if len(body) > 0 && body[0] == '{' {
		return truncate(body, 64)
	}
	const max = 30
	if len(body) > max {
		return fmt.Sprintf("%x ...", body[:max])
	}
	return fmt.Sprintf("%x", body)
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
