// Package v1 is the example.kubeplay.dev/v1 API of the example project: the
// Widget, whose controller keeps a ConfigMap with the widget's data.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Widget.
var GroupVersion = schema.GroupVersion{Group: "example.kubeplay.dev", Version: "v1"}

// AddToScheme registers Widget and WidgetList in a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Widget asks for a ConfigMap holding its data.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what a Widget asks for.
type WidgetSpec struct {
	// Data goes into the widget's ConfigMap.
	Data map[string]string `json:"data,omitempty"`
}

// WidgetStatus is what the controller did.
type WidgetStatus struct {
	// ConfigMap is the name of the ConfigMap the controller keeps.
	ConfigMap string `json:"configMap,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopy returns a copy of w that shares nothing with it.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if w.Spec.Data != nil {
		c.Spec.Data = make(map[string]string, len(w.Spec.Data))
		for k, v := range w.Spec.Data {
			c.Spec.Data[k] = v
		}
	}
	return &c
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopy()
	}
	return &c
}
