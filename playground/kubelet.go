package playground

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

func isPodChange(ev store.Event) bool { return strings.HasPrefix(ev.KV.Key, "/registry/pods/") }

// sync deletes the pods whose grace period is over; it asks to run again
// when the next one ends.
func (k *kubelet) sync(ctx context.Context) time.Duration {
	var pods struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := k.api.Get(ctx, "/api/v1/pods", &pods); err != nil {
		if ctx.Err() == nil {
			slog.Warn("kubelet", "err", err)
		}
		return retryInterval
	}
	var next time.Duration
	for _, p := range pods.Items {
		md := p.Metadata
		if md.DeletionTimestamp == nil || p.Spec.NodeName == "" || md.DeletionGracePeriodSeconds == nil || *md.DeletionGracePeriodSeconds == 0 {
			continue
		}
		if wait := md.DeletionTimestamp.Sub(k.now()); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		zero := int64(0)
		opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &md.UID}}
		path := "/api/v1/namespaces/" + url.PathEscape(md.Namespace) + "/pods/" + url.PathEscape(md.Name)
		if err := k.api.Do(ctx, "DELETE", path, opts, nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			slog.Warn("kubelet", "pod", md.Namespace+"/"+md.Name, "err", err)
			return retryInterval
		}
	}
	return next
}
