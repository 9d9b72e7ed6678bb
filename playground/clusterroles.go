package playground

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The ClusterRole aggregation controller runs here, beside the namespace
// controller, rather than in the server's write path: in a real cluster it
// is a kube-controller-manager controller that writes the aggregated rules
// through the API, so a bare API server (the oracle, and kubeplay's server
// package) serves admin, edit and view with no rules, and a sandbox, which
// simulates the whole cluster, fills them in the way a cluster does.

// aggregationControllerUser is who the controller acts as: the
// ServiceAccount the default RBAC roles grant escalate on ClusterRoles.
var aggregationControllerUser = controllerUser("clusterrole-aggregation-controller")

const aggregationControllerAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:clusterrole-aggregation-controller"

// clusterRoleAggregator keeps the rules of every ClusterRole with an
// aggregationRule equal to the rules of the ClusterRoles its selectors
// match, in name order, without duplicates.
type clusterRoleAggregator struct {
	api *inproc.Client
}

func newClusterRoleAggregator(api http.Handler) *clusterRoleAggregator {
	return &clusterRoleAggregator{api: inproc.New(api, aggregationControllerAgent)}
}

func isClusterRoleChange(ev store.Event) bool {
	return strings.HasPrefix(ev.KV.Key, "/registry/clusterroles/")
}

// sync aggregates the rules of every aggregated ClusterRole; a write that
// conflicts is retried on the event of the write that caused it, anything
// else after retryInterval.
func (c *clusterRoleAggregator) sync(ctx context.Context) time.Duration {
	if err := c.syncAll(ctx); err != nil && ctx.Err() == nil {
		slog.Warn("clusterrole aggregation controller", "err", err)
		return retryInterval
	}
	return 0
}

type clusterRole struct {
	APIVersion      string            `json:"apiVersion"`
	Kind            string            `json:"kind"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	AggregationRule *struct {
		ClusterRoleSelectors []metav1.LabelSelector `json:"clusterRoleSelectors"`
	} `json:"aggregationRule,omitempty"`
	Rules []map[string]any `json:"rules"`
}

const clusterRolesPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles"

func (c *clusterRoleAggregator) syncAll(ctx context.Context) error {
	var list struct {
		Items []clusterRole `json:"items"`
	}
	if err := c.api.Get(ctx, clusterRolesPath, &list); err != nil {
		return err
	}
	for _, role := range list.Items {
		if role.AggregationRule == nil {
			continue
		}
		rules := aggregate(role, list.Items)
		if reflect.DeepEqual(rules, role.Rules) || (len(rules) == 0 && len(role.Rules) == 0) {
			continue
		}
		role.Rules = rules
		role.APIVersion, role.Kind = "rbac.authorization.k8s.io/v1", "ClusterRole"
		if err := c.api.Do(ctx, "PUT", clusterRolesPath+"/"+role.Metadata.Name, role, nil); err != nil {
			return err // a conflict is retried on the event of the write that caused it
		}
	}
	return nil
}

// aggregate returns the rules of the roles role's selectors match.
func aggregate(role clusterRole, all []clusterRole) []map[string]any {
	var selectors []labels.Selector
	for _, ls := range role.AggregationRule.ClusterRoleSelectors {
		if sel, err := metav1.LabelSelectorAsSelector(&ls); err == nil {
			selectors = append(selectors, sel)
		}
	}
	var rules []map[string]any
	for _, other := range all { // the list is in name order
		if other.Metadata.Name == role.Metadata.Name {
			continue
		}
		set := labels.Set(other.Metadata.Labels)
		if !slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(set) }) {
			continue
		}
		for _, r := range other.Rules {
			if !slices.ContainsFunc(rules, func(have map[string]any) bool { return reflect.DeepEqual(have, r) }) {
				rules = append(rules, r)
			}
		}
	}
	return rules
}
