package playground

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
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
// match, in name order, without duplicates. It is a reconciler whose keys
// are the names of the ClusterRoles with an aggregationRule.
type clusterRoleAggregator struct {
	api *inproc.Client
	// aggregating are the ClusterRoles with an aggregationRule, as of the
	// last change passed to keysOf; only the event goroutine uses it.
	aggregating map[string]struct{}
}

var _ reconciler = (*clusterRoleAggregator)(nil)

func newClusterRoleAggregator(api http.Handler) *clusterRoleAggregator {
	return &clusterRoleAggregator{api: inproc.New(api, aggregationControllerAgent), aggregating: map[string]struct{}{}}
}

// clusterRoleKeyPrefix is where the store keeps ClusterRoles.
const clusterRoleKeyPrefix = "/registry/clusterroles/"

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

// resync starts the set of aggregating roles over from a list, and returns
// them all.
func (c *clusterRoleAggregator) resync(ctx context.Context, _ int64) ([]string, error) {
	var list struct {
		Items []clusterRole `json:"items"`
	}
	if err := c.api.Get(ctx, clusterRolesPath, &list); err != nil {
		return nil, err
	}
	clear(c.aggregating)
	var keys []string
	for _, role := range list.Items {
		if role.AggregationRule != nil {
			c.aggregating[role.Metadata.Name] = struct{}{}
			keys = append(keys, role.Metadata.Name)
		}
	}
	return keys, nil
}

// keysOf follows which ClusterRoles aggregate and, since any change to a
// ClusterRole (its labels, its rules) can change what they aggregate, names
// all of them on every change to one, the changed role included if it
// aggregates.
func (c *clusterRoleAggregator) keysOf(ev store.Event, add func(string)) {
	name, ok := strings.CutPrefix(ev.KV.Key, clusterRoleKeyPrefix)
	if !ok {
		return
	}
	if ev.Type != store.Deleted && hasAggregationRule(ev.KV.Value) {
		c.aggregating[name] = struct{}{}
	} else {
		delete(c.aggregating, name)
	}
	for _, n := range slices.Sorted(maps.Keys(c.aggregating)) {
		add(n)
	}
}

// hasAggregationRule reports whether a stored ClusterRole has an
// aggregationRule; one the API could not decode has none.
func hasAggregationRule(value []byte) bool {
	var role struct {
		AggregationRule json.RawMessage `json:"aggregationRule"`
	}
	return json.Unmarshal(value, &role) == nil && len(role.AggregationRule) > 0 && string(role.AggregationRule) != "null"
}

// reconcile sets the rules of the ClusterRole name to those it aggregates,
// if they differ. A write that conflicts is retried (and the write that
// caused it names the role again anyway).
func (c *clusterRoleAggregator) reconcile(ctx context.Context, name string) (time.Duration, error) {
	var list struct {
		Items []clusterRole `json:"items"`
	}
	if err := c.api.Get(ctx, clusterRolesPath, &list); err != nil {
		return 0, err
	}
	i := slices.IndexFunc(list.Items, func(r clusterRole) bool { return r.Metadata.Name == name })
	if i < 0 || list.Items[i].AggregationRule == nil {
		return 0, nil // gone, or no longer aggregating
	}
	role := list.Items[i]
	rules := aggregate(role, list.Items)
	if reflect.DeepEqual(rules, role.Rules) || (len(rules) == 0 && len(role.Rules) == 0) {
		return 0, nil
	}
	role.Rules = rules
	role.APIVersion, role.Kind = "rbac.authorization.k8s.io/v1", "ClusterRole"
	return 0, c.api.Do(ctx, http.MethodPut, clusterRolesPath+"/"+url.PathEscape(name), role, nil)
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
