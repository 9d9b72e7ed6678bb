package playground

import (
	"context"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

var rootCACertPublisherDef = controllerDef{name: "rootCACertPublisher", title: "root-ca-cert-publisher", serviceAccount: "root-ca-cert-publisher",
	start: func(sb *Sandbox) reconciler {
		return &rootCAPublisher{h: sb.handler, c: inproc.New(sb.handler, controllerAgent("root-ca-cert-publisher")), api: sb.api,
			each: newPerNamespace(coreV1("configmaps"), rootCAConfigMap)}
	}}

const (
	// rootCAConfigMap is the ConfigMap of every namespace that holds the
	// cluster's CA, which every pod's API credentials volume mounts.
	rootCAConfigMap = "kube-root-ca.crt"
	// rootCADescription is its kubernetes.io/description annotation, as
	// kube-controller-manager writes it.
	rootCADescription = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// rootCAPublisher is kube-controller-manager's root-ca-cert-publisher: the
// kube-root-ca.crt ConfigMap of every active namespace holds the cluster's
// CA (ca.crt) and its description, put back when changed or deleted. Its
// keys are namespace names.
type rootCAPublisher struct {
	h    http.Handler
	c    *inproc.Client
	api  *server.Server
	each *perNamespace
}

func (rp *rootCAPublisher) resync(ctx context.Context, _ int64) ([]string, error) {
	return rp.each.resync(ctx, rp.h, coreV1("configmaps"))
}

func (rp *rootCAPublisher) keysOf(ev store.Event, q queue) { rp.each.keysOf(ev, q) }

func (rp *rootCAPublisher) reconcile(ctx context.Context, ns string) (time.Duration, error) {
	active, cm := rp.each.state(ns)
	if !active {
		return 0, nil
	}
	ca, err := rp.api.ClusterCA(ctx)
	if err != nil {
		return 0, err
	}
	data := jsonmap.Object{"ca.crt": string(ca.CertPEM)}
	if cm == nil {
		return 0, createIgnoringGone(ctx, rp.c, workloadCollection("", "configmaps", ns), jsonmap.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": jsonmap.Object{"name": rootCAConfigMap, "annotations": jsonmap.Object{"kubernetes.io/description": rootCADescription}},
			"data":     data})
	}
	if jsonEqual(cm["data"], data) && jsonmap.String(cm, "metadata", "annotations", "kubernetes.io/description") != "" {
		return 0, nil
	}
	cm = copyMap(cm)
	cm["data"] = data
	md := meta(cm)
	annotations := jsonmap.Child(md, "annotations")
	if annotations == nil {
		annotations = jsonmap.Object{}
		md["annotations"] = annotations
	}
	annotations["kubernetes.io/description"] = rootCADescription
	cm["apiVersion"], cm["kind"] = "v1", "ConfigMap"
	// The resourceVersion is the one last seen: a conflict means a newer
	// change, which names the namespace again.
	err = rp.c.Do(ctx, "PUT", namedPath("", "configmaps", ns, rootCAConfigMap), cm, nil)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}
