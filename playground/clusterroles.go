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
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The ClusterRole aggregation controller runs here, beside the namespace
// controller, rather than in the server's write path: in a real cluster it
// is a kube-controller-manager controller that writes the aggregated rules
// through the API, so a bare API server (the oracle, and kubeplay's server
// package) serves admin, edit and view with no rules, and a sandbox, which
// simulates the whole cluster, fills them in the way a cluster does.

// The controller acts as its ServiceAccount, which the default RBAC roles
// grant escalate on ClusterRoles.
var clusterRoleAggregationDef = controllerDef{name: "clusterRoleAggregation", title: "clusterrole aggregation controller",
	serviceAccount: "clusterrole-aggregation-controller",
	start:          func(sb *Sandbox) reconciler { return newClusterRoleAggregator(sb.handler, sb.store) }}

// clusterRoleAggregator keeps the rules of every ClusterRole with an
// aggregationRule equal to the rules of the ClusterRoles its selectors
// match, in name order, without duplicates. It is a reconciler whose keys
// are the names of the ClusterRoles with an aggregationRule. As
// kube-controller-manager's, it reads the ClusterRoles from a cache the
// store's changes keep current (an informer's), and sends a request only to
// write a role whose rules are behind.
type clusterRoleAggregator struct {
	api   *inproc.Client
	store store.Store

	mu    sync.Mutex
	roles map[string]clusterRole // the cache, by name
}

var _ reconciler = (*clusterRoleAggregator)(nil)

func newClusterRoleAggregator(api http.Handler, st store.Store) *clusterRoleAggregator {
	return &clusterRoleAggregator{api: inproc.New(api, controllerAgent("clusterrole-aggregation-controller")), store: st, roles: map[string]clusterRole{}}
}

// clusterRoleKeyPrefix is where the store keeps ClusterRoles.
var clusterRoleKeyPrefix = builtinKeyPrefix(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"})

type clusterRole struct {
	APIVersion      string            `json:"apiVersion"`
	Kind            string            `json:"kind"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	AggregationRule *struct {
		ClusterRoleSelectors []metav1.LabelSelector `json:"clusterRoleSelectors"`
	} `json:"aggregationRule,omitempty"`
	Rules []map[string]any `json:"rules"`
}

// cachedRole is what the cache keeps of a stored ClusterRole; ok is false
// for one the API could not decode, which aggregates and is aggregated by
// nothing.
func cachedRole(name string, value []byte) (role clusterRole, ok bool) {
	var stored struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		AggregationRule json.RawMessage  `json:"aggregationRule"`
		Rules           []map[string]any `json:"rules"`
	}
	if json.Unmarshal(value, &stored) != nil {
		return role, false
	}
	role.Metadata.Name, role.Metadata.Labels, role.Rules = name, stored.Metadata.Labels, stored.Rules
	if len(stored.AggregationRule) > 0 && string(stored.AggregationRule) != "null" {
		if json.Unmarshal(stored.AggregationRule, &role.AggregationRule) != nil {
			return role, false
		}
	}
	return role, true
}

const clusterRolesPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles"

// resync fills the cache from the store as of rev, and returns every
// aggregating role.
func (c *clusterRoleAggregator) resync(ctx context.Context, rev int64) ([]string, error) {
	list, err := c.store.List(ctx, clusterRoleKeyPrefix, "", 0, rev)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.roles)
	for _, kv := range list.Items {
		name := strings.TrimPrefix(kv.Key, clusterRoleKeyPrefix)
		if role, ok := cachedRole(name, kv.Value); ok {
			c.roles[name] = role
		}
	}
	return c.aggregatingLocked(), nil
}

// aggregatingLocked returns the names of the aggregating roles, in order;
// it requires c.mu.
func (c *clusterRoleAggregator) aggregatingLocked() []string {
	var names []string
	for name, role := range c.roles {
		if role.AggregationRule != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// keysOf keeps the cache current and, since any change to a ClusterRole
// (its labels, its rules) can change what the aggregating ones hold, names
// all of them; reconciling one whose rules are current costs nothing.
func (c *clusterRoleAggregator) keysOf(ev store.Event, q queue) {
	name, ok := strings.CutPrefix(ev.KV.Key, clusterRoleKeyPrefix)
	if !ok {
		return
	}
	c.mu.Lock()
	if role, ok := cachedRole(name, ev.KV.Value); ok && ev.Type != store.Deleted {
		c.roles[name] = role
	} else {
		delete(c.roles, name)
	}
	names := c.aggregatingLocked()
	c.mu.Unlock()
	for _, n := range names {
		q.Add(n)
	}
}

// want returns the rules the role name should hold, and whether they
// differ from those it holds, as the cache has them.
func (c *clusterRoleAggregator) want(name string) (rules []map[string]any, behind bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	role, ok := c.roles[name]
	if !ok || role.AggregationRule == nil {
		return nil, false // gone, or no longer aggregating
	}
	all := make([]clusterRole, 0, len(c.roles))
	for _, n := range slices.Sorted(maps.Keys(c.roles)) {
		all = append(all, c.roles[n])
	}
	rules = aggregate(role, all)
	return rules, !reflect.DeepEqual(rules, role.Rules) && (len(rules) > 0 || len(role.Rules) > 0)
}

// reconcile sets the rules of the ClusterRole name to those it aggregates,
// if they differ. The write carries the resourceVersion it read, so a role
// changed meanwhile conflicts and is retried (and the change that caused
// the conflict names it again anyway).
func (c *clusterRoleAggregator) reconcile(ctx context.Context, name string) (time.Duration, error) {
	rules, behind := c.want(name)
	if !behind {
		return 0, nil
	}
	path := clusterRolesPath + "/" + url.PathEscape(name)
	var role clusterRole
	if err := c.api.Get(ctx, path, &role); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	if role.AggregationRule == nil || reflect.DeepEqual(rules, role.Rules) {
		return 0, nil
	}
	role.Rules = rules
	role.APIVersion, role.Kind = "rbac.authorization.k8s.io/v1", "ClusterRole"
	return 0, c.api.Do(ctx, http.MethodPut, path, role, nil)
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
