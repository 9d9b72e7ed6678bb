package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ConversionTimeout bounds a call to a CRD's conversion webhook, as
// kube-apiserver's client does.
const ConversionTimeout = 30 * time.Second

// ConversionReviewVersion is the ConversionReview version sent to a webhook
// that accepts versions (its conversionReviewVersions): the first one
// known.
func ConversionReviewVersion(versions []string) (string, error) {
	for _, v := range versions {
		if slices.Contains(reviewVersions, v) {
			return v, nil
		}
	}
	return "", errors.New("no supported conversion review versions")
}

// ConversionReview is the body of a ConversionReview of version asking for
// objects in desiredAPIVersion. Like kube-apiserver's, it carries an empty
// response.
func ConversionReview(version, uid, desiredAPIVersion string, objects []map[string]any) ([]byte, error) {
	return json.Marshal(map[string]any{
		"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/" + version,
		"request":  map[string]any{"uid": uid, "desiredAPIVersion": desiredAPIVersion, "objects": objects},
		"response": map[string]any{"uid": "", "convertedObjects": nil, "result": map[string]any{"metadata": map[string]any{}}},
	})
}

// ConvertedObjects are the objects of a webhook's answer to the
// ConversionReview of version and uid, or why the answer is not one, in
// kube-apiserver's words.
func ConvertedObjects(version, uid string, body []byte) ([]map[string]any, error) {
	var review struct {
		metav1.TypeMeta `json:",inline"`
		Response        *struct {
			UID              string           `json:"uid"`
			ConvertedObjects []map[string]any `json:"convertedObjects"`
			Result           metav1.Status    `json:"result"`
		} `json:"response"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	want := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: version, Kind: "ConversionReview"}
	if got := review.GroupVersionKind(); version == "v1" && got != want {
		return nil, fmt.Errorf("expected webhook response of %v, got %v", want, got)
	}
	r := review.Response
	switch {
	case r == nil:
		return nil, errors.New("no response provided")
	case r.UID != uid:
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.UID)
	case r.Result.Status != metav1.StatusSuccess && r.Result.Message != "":
		return nil, errors.New(r.Result.Message)
	case r.Result.Status != metav1.StatusSuccess:
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", r.Result.Status)
	}
	return r.ConvertedObjects, nil
}
