package server

import (
	"kubeplay/internal/jsonmap"
	"kubeplay/server/conversion"
)

// hpaStrategy is the HorizontalPodAutoscaler's: an update of its status
// resets only its spec, so its labels and annotations change with the
// status, as kube-apiserver's strategy does.
var hpaStrategy = strategy{updateSkipsObjectMeta: true, statusOnly: hpaStatusOnly}

// hpaStatusOnly is obj with old's spec (in v1, with the annotations that
// carry the spec's v2-only fields) and the metadata the server owns.
func hpaStatusOnly(rs *resourceStore, obj, old object) object {
	out := deepCopyObject(obj)
	out["spec"] = deepCopyObject(old)["spec"]
	rs.prepareForUpdate("status", out, old)
	annotations := jsonmap.Child(metadata(out), "annotations")
	oldAnnotations := jsonmap.Child(metadata(old), "annotations")
	for _, k := range conversion.HPASpecAnnotations {
		if v, ok := oldAnnotations[k]; ok {
			if annotations == nil {
				annotations = map[string]any{}
				metadata(out)["annotations"] = annotations
			}
			annotations[k] = v
		} else {
			delete(annotations, k)
		}
	}
	return out
}
