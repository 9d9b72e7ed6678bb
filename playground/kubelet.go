package playground

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// kubeletAgent is how a kubelet identifies itself to the API server.
const kubeletAgent = "kubelet/v1.35.4 (linux/amd64) kubernetes/7b8c6cf"

// kubelet stands in for the kubelets of a cluster's nodes, for one thing
// only: a pod bound to a node and deleted gracefully stays until its node's
// kubelet has stopped its containers and deletes it with a grace period of
// 0. Here the containers stop when the grace period ends.
type kubelet struct {
	api *inproc.Client
	now func() time.Time
}

func newKubelet(api http.Handler, now func() time.Time) *kubelet {
	return &kubelet{api: inproc.New(api, kubeletAgent), now: now}
}

// podKeyPrefix is where the store keeps pods.
var podKeyPrefix = builtinKeyPrefix(schema.GroupVersionResource{Version: "v1", Resource: "pods"})

// boundPod is what the kubelet reads of a pod.
type boundPod struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
}

// stopping reports whether p waits for its node's kubelet to stop it.
func (p *boundPod) stopping() bool {
	md := p.Metadata
	return md.DeletionTimestamp != nil && p.Spec.NodeName != "" && md.DeletionGracePeriodSeconds != nil && *md.DeletionGracePeriodSeconds > 0
}

func (k *kubelet) resync(ctx context.Context, _ int64) ([]string, error) {
	var pods struct {
		Items []boundPod `json:"items"`
	}
	if err := k.api.Get(ctx, "/api/v1/pods", &pods); err != nil {
		return nil, err
	}
	var keys []string
	for _, p := range pods.Items {
		if p.stopping() {
			keys = append(keys, p.Metadata.Namespace+"/"+p.Metadata.Name)
		}
	}
	return keys, nil
}

// keysOf names a pod whose deletion has begun; the kubelet has nothing to
// do for any other change.
func (k *kubelet) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix); ok && ev.Type == store.Updated &&
		bytes.Contains(ev.KV.Value, []byte(`"deletionGracePeriodSeconds"`)) {
		q.Add(key)
	}
}

// reconcile deletes a pod whose grace period is over, or asks to look again
// when it ends.
func (k *kubelet) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	path := "/api/v1/namespaces/" + url.PathEscape(ns) + "/pods/" + url.PathEscape(name)
	var p boundPod
	if err := k.api.Get(ctx, path, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	if !p.stopping() {
		return 0, nil
	}
	md := p.Metadata
	if wait := md.DeletionTimestamp.Sub(k.now()); wait > 0 {
		return wait, nil
	}
	zero := int64(0)
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &md.UID}}
	if err := k.api.Do(ctx, "DELETE", path, opts, nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, err
	}
	return 0, nil
}
