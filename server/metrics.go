package server

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// MetricsSource is what metrics-server reads from the nodes' kubelets: the
// resource usage of the nodes and of the containers of their running pods.
// A server given one (SetMetrics) serves it as metrics-server does, as
// the group metrics.k8s.io/v1beta1 of the APIService v1beta1.metrics.k8s.io:
// get and list of nodes and pods, with label and field selectors, for
// `kubectl top` and the horizontal pod autoscaler.
type MetricsSource interface {
	// NodeMetrics returns the readings of the nodes that have some, with
	// each node's name and labels in their metadata.
	NodeMetrics(ctx context.Context) ([]metricsv1beta1.NodeMetrics, error)
	// PodMetrics returns the readings of the pods of namespace ("": all)
	// that have some (running pods), with each pod's namespace, name and
	// labels in their metadata.
	PodMetrics(ctx context.Context, namespace string) ([]metricsv1beta1.PodMetrics, error)
}

// metricsAPIService names the APIService of the resource metrics API.
const metricsAPIService = "v1beta1.metrics.k8s.io"

// metricsResources are the resources metrics-server serves, as its
// discovery describes them (no singular name, get and list only).
var metricsResources = []catalog.Resource{
	{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "NodeMetrics", Resource: "nodes", Verbs: []string{"get", "list"}, APIService: metricsAPIService},
	{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetrics", Resource: "pods", Namespaced: true, Verbs: []string{"get", "list"}, APIService: metricsAPIService},
}

// metricsHolder holds the metrics source served, if any.
type metricsHolder struct{ atomic.Pointer[MetricsSource] }

func (h *metricsHolder) source() MetricsSource {
	if p := h.Load(); p != nil {
		return *p
	}
	return nil
}

// SetMetrics serves src as the resource metrics API (nil stops), and
// registers its APIService, Available as kube-aggregator finds an API
// served in process (or removes it), as installing (or removing)
// metrics-server does. It writes only when the APIService must change.
func (s *Server) SetMetrics(ctx context.Context, src MetricsSource) error {
	if src == nil {
		s.metrics.Store(nil)
		s.catalog.SetExtension(metricsAPIService, nil)
	} else {
		s.metrics.Store(&src)
		s.catalog.SetExtension(metricsAPIService, slices.Clone(metricsResources))
	}
	res := catalog.LookupBuiltin(apiServicesGVR)
	_, _, err := s.reg.getObject(ctx, res, "", metricsAPIService)
	switch {
	case apierrors.IsNotFound(err) && src != nil:
		return s.reg.createBootstrap(ctx, res, objectKey(res, "", metricsAPIService), metricsServerAPIService())
	case err == nil && src == nil:
		_, _, err = s.reg.deleteObject(ctx, newResourceStore(res), "", metricsAPIService, &metav1.DeleteOptions{})
	case apierrors.IsNotFound(err):
		err = nil
	}
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	return err
}

// metricsServerAPIService is metrics-server's APIService (the priorities of
// its manifest), without the Service it names there: the simulated source
// answers in process, as a local APIService does.
func metricsServerAPIService() object {
	return object{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": metricsAPIService, "labels": map[string]any{"k8s-app": "metrics-server"},
			"annotations": map[string]any{"kubeplay.dev/simulated": "true",
				"kubernetes.io/description": "The resource metrics API of metrics-server, simulated by kubeplay: what the nodes and the containers of their running pods use is computed (from the containers' requests, or the usage annotations of simulated.kubeplay.dev), not measured."}},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": int64(100), "versionPriority": int64(100)},
	}
}

// serveMetrics answers a get or a list of metrics.k8s.io's nodes or pods
// as metrics-server does.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, req *request) {
	src := s.metrics.source()
	if src == nil {
		encoding.WriteError(w, r, errNoResource()) // switched off since routed
		return
	}
	sel, err := parseSelectors(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	readings, err := s.metricsReadings(r.Context(), src, req)
	if err != nil {
		encoding.WriteError(w, r, apierrors.NewInternalError(err))
		return
	}
	if req.verb == "get" {
		for _, reading := range readings {
			if str(metadata(reading.obj), "name") == req.name {
				s.writeMetrics(w, r, req, []metricsReading{reading})
				return
			}
		}
		encoding.WriteError(w, r, s.noMetrics(r.Context(), req))
		return
	}
	var selected []metricsReading
	for _, reading := range readings {
		if sel.matches(req.res, reading.obj) {
			selected = append(selected, reading)
		}
	}
	s.writeMetrics(w, r, req, selected)
}

// metricsReading is one reading: as the source gave it (typed, which
// encodes its fields in metrics-server's order) and as an object (for
// selectors and Tables).
type metricsReading struct {
	typed interface{ GetObjectKind() schema.ObjectKind }
	obj   object
}

// metricsReadings reads the source's readings of req's resource, pods by
// namespace and name, nodes by name.
func (s *Server) metricsReadings(ctx context.Context, src MetricsSource, req *request) ([]metricsReading, error) {
	var out []metricsReading
	if req.resource == "nodes" {
		nodes, err := src.NodeMetrics(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			out = append(out, metricsReading{typed: &n}) // a copy, whose kind a get sets
		}
	} else {
		pods, err := src.PodMetrics(ctx, req.namespace)
		if err != nil {
			return nil, err
		}
		for _, p := range pods {
			out = append(out, metricsReading{typed: &p})
		}
	}
	for i := range out {
		b, err := json.Marshal(out[i].typed)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &out[i].obj); err != nil {
			return nil, err
		}
		out[i].obj["kind"], out[i].obj["apiVersion"] = req.res.Kind, req.res.APIVersion()
	}
	slices.SortFunc(out, func(a, b metricsReading) int {
		return cmp.Or(cmp.Compare(str(metadata(a.obj), "namespace"), str(metadata(b.obj), "namespace")),
			cmp.Compare(str(metadata(a.obj), "name"), str(metadata(b.obj), "name")))
	})
	return out, nil
}

// noMetrics is metrics-server's answer for an object it has no reading of:
// its informers' NotFound for an object they do not hold (a pod not
// Running, which they do not watch), else a NotFound of the metrics.
func (s *Server) noMetrics(ctx context.Context, req *request) error {
	gvr, notFound := corev1.SchemeGroupVersion.WithResource("pods"), schema.GroupResource{Resource: "pods"}
	readingsName := schema.GroupResource{Group: "metrics.k8s.io", Resource: "podmetrics"}
	name := req.namespace + "/" + req.name
	if req.resource == "nodes" {
		gvr, notFound = corev1.SchemeGroupVersion.WithResource("nodes"), schema.GroupResource{Resource: "node"}
		readingsName, name = schema.GroupResource{Group: "metrics.k8s.io", Resource: "nodemetrics"}, req.name
	}
	obj, _, err := s.reg.getObject(ctx, catalog.LookupBuiltin(gvr), req.namespace, req.name)
	if apierrors.IsNotFound(err) || err == nil && req.resource == "pods" && jsonmap.String(obj, "status", "phase") != string(corev1.PodRunning) {
		return apierrors.NewNotFound(notFound, req.name)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return apierrors.NewNotFound(readingsName, name)
}

// writeMetrics answers with one reading (a get) or a list of them, in the
// representation asked for: metrics-server's Table has a column for each
// resource used, and the reading's window.
func (s *Server) writeMetrics(w http.ResponseWriter, r *http.Request, req *request, readings []metricsReading) {
	conv, err := s.newConverter(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	objs := make([]object, len(readings))
	for i, reading := range readings {
		objs[i] = reading.obj
	}
	switch {
	case conv.as.As == encoding.AsTable:
		conv.printer = metricsPrinter{}
		// metrics-server's lists and Tables have no resourceVersion.
		encoding.Write(w, r, http.StatusOK, conv.table(map[string]any{}, objs))
	case conv.as.As != "" && req.verb == "get":
		s.writeObject(w, r, req, http.StatusOK, objs[0])
	case conv.as.As != "":
		s.writeList(w, r, req, &objectList{items: objs})
	case req.verb == "get":
		readings[0].typed.GetObjectKind().SetGroupVersionKind(req.res.GroupVersionKind())
		encoding.Write(w, r, http.StatusOK, readings[0].typed)
	case req.resource == "nodes":
		list := &metricsv1beta1.NodeMetricsList{Items: []metricsv1beta1.NodeMetrics{}}
		for _, reading := range readings {
			list.Items = append(list.Items, *reading.typed.(*metricsv1beta1.NodeMetrics))
		}
		list.SetGroupVersionKind(metricsv1beta1.SchemeGroupVersion.WithKind("NodeMetricsList"))
		encoding.Write(w, r, http.StatusOK, list)
	default:
		list := &metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{}}
		for _, reading := range readings {
			list.Items = append(list.Items, *reading.typed.(*metricsv1beta1.PodMetrics))
		}
		list.SetGroupVersionKind(metricsv1beta1.SchemeGroupVersion.WithKind("PodMetricsList"))
		encoding.Write(w, r, http.StatusOK, list)
	}
}

// metricsPrinter prints readings as metrics-server's Tables do: the name,
// what is used of cpu and memory (a pod's containers summed), the window.
type metricsPrinter struct{}

func (metricsPrinter) Columns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
		{Name: "cpu", Type: "string", Format: "quantity"},
		{Name: "memory", Type: "string", Format: "quantity"},
		{Name: "Window", Type: "string", Format: "duration"},
	}
}

func (metricsPrinter) Cells(obj map[string]any, _ time.Time) []any {
	b, _ := json.Marshal(obj)
	var reading struct {
		metricsv1beta1.PodMetrics
		Usage corev1.ResourceList `json:"usage"`
	}
	json.Unmarshal(b, &reading)
	usage := reading.Usage
	if usage == nil {
		usage = corev1.ResourceList{}
		for _, c := range reading.Containers {
			for name, q := range c.Usage {
				sum := usage[name]
				sum.Add(q)
				usage[name] = sum
			}
		}
	}
	cpu, memory := usage[corev1.ResourceCPU], usage[corev1.ResourceMemory]
	return []any{reading.Name, cpu.String(), memory.String(), reading.Window.Duration.String()}
}

func (metricsPrinter) Conditions(map[string]any) []metav1.TableRowCondition { return nil }
