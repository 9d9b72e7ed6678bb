package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// disruptionController is kube-controller-manager's disruption controller:
// it writes each PodDisruptionBudget's status — how many of its pods are
// healthy, how many must be, how many it expects (by its pods' controllers'
// scale) and so how many disruptions it allows — which the eviction API
// reads, and forgets the evictions that did not lead to a deletion. Its
// keys are "<namespace>/<name>" of PodDisruptionBudgets.
type disruptionController struct {
	c *inproc.Client
	// reads lists what the controller reads from kube-controller-manager's
	// shared informers (pods), whose reads its role does not grant.
	reads  *inproc.Client
	events *eventRecorder
	now    func() time.Time
	// budgets holds the budgets' selectors, so that a pod's change names
	// its budgets.
	budgets selectorIndex
	served  func() bool
}

var disruptionDef = controllerDef{name: "disruption", title: "disruption controller", serviceAccount: "disruption-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("disruption-controller"))
		return &disruptionController{c: c, reads: inproc.New(sb.handler, informerAgent), events: newEventRecorder(c, "controllermanager", "", sb.clock.Now), now: sb.clock.Now,
			served: servedIn(sb, pdbGVR)}
	}}

// evictionDeletionTimeout is how long after an eviction the controller
// waits to see its pod being deleted before it forgets the eviction.
const evictionDeletionTimeout = 2 * time.Minute

var (
	pdbGVR       = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	pdbKeyPrefix = builtinKeyPrefix(pdbGVR)
)

func (dc *disruptionController) resync(ctx context.Context, _ int64) ([]string, error) {
	dc.budgets = selectorIndex{}
	if !dc.served() {
		return nil, nil
	}
	var l policyv1.PodDisruptionBudgetList
	if err := dc.c.Get(ctx, allPath(pdbGVR), &l); err != nil {
		return nil, err
	}
	var keys []string
	for i := range l.Items {
		dc.budgets.set(l.Items[i].Namespace, l.Items[i].Name, budgetSelector(&l.Items[i]))
		keys = append(keys, l.Items[i].Namespace+"/"+l.Items[i].Name)
	}
	return keys, nil
}

// budgetSelector is the pods a budget covers (nil: none).
func budgetSelector(pdb *policyv1.PodDisruptionBudget) labels.Selector {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || pdb.Spec.Selector == nil {
		return nil
	}
	return sel
}

// keysOf names a budget that changed, and the budgets of a pod that did.
func (dc *disruptionController) keysOf(ev store.Event, q queue) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, pdbKeyPrefix); ok {
		ns, name, _ := strings.Cut(rest, "/")
		if ev.Type == store.Deleted {
			dc.budgets.remove(ns, name)
			return
		}
		var pdb policyv1.PodDisruptionBudget
		if json.Unmarshal(ev.KV.Value, &pdb) == nil {
			dc.budgets.set(ns, name, budgetSelector(&pdb))
		}
		q.Add(rest)
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		dc.budgets.queueSelecting(ev, ns, q)
	}
}

func (dc *disruptionController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	var pdb policyv1.PodDisruptionBudget
	if err := dc.c.Get(ctx, namedPath("policy/v1", "poddisruptionbudgets", ns, name), &pdb); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	recheck, err := dc.sync(ctx, &pdb)
	if err == nil || apierrors.IsConflict(err) {
		return recheck, err
	}
	// Whatever went wrong, the budget allows no disruption until it is
	// known to.
	failed := pdb.DeepCopy()
	failed.Status.DisruptionsAllowed = 0
	dc.setCondition(failed, metav1.ConditionFalse, policyv1.SyncFailedReason, err.Error(), failed.Status.ObservedGeneration)
	if werr := dc.putStatus(ctx, failed); werr != nil {
		return 0, werr
	}
	// What failed (a pod whose controller is gone, a target without
	// /scale) fails again until the budget or its pods change, which
	// queues it anyway: no retry.
	return 0, nil
}

// sync writes pdb's status; it returns when to look again, if a recorded
// eviction may expire.
func (dc *disruptionController) sync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (time.Duration, error) {
	ref := metaRef("policy/v1", "PodDisruptionBudget", pdb.ObjectMeta)
	pods, err := dc.pods(ctx, pdb)
	if err != nil {
		dc.events.event(ctx, ref, "Warning", "NoPods", fmt.Sprintf("Failed to get pods: %v", err))
		return 0, err
	}
	if len(pods) == 0 {
		dc.events.event(ctx, ref, "Normal", "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := dc.expectedPods(ctx, pdb, pods)
	if err != nil {
		dc.events.event(ctx, ref, "Warning", "CalculateExpectedPodCountFailed", fmt.Sprintf("Failed to calculate the number of expected pods: %v", err))
		return 0, err
	}
	if unmanaged {
		dc.events.event(ctx, ref, "Warning", "UnmanagedPods", fmt.Sprintf("Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.", pdb.Spec.Selector))
	}
	now := dc.now()
	disrupted, recheck := dc.disruptedPods(ctx, pdb, pods, now)
	var healthy int32
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(evictionDeletionTimeout).After(now) {
			continue // about to be deleted
		}
		if isPodReady(pod) {
			healthy++
		}
	}
	allowed := healthy - desired
	if expected <= 0 || allowed < 0 {
		allowed = 0
	}
	st := pdb.Status
	if st.CurrentHealthy == healthy && st.DesiredHealthy == desired && st.ExpectedPods == expected && st.DisruptionsAllowed == allowed &&
		disruptedEqual(st.DisruptedPods, disrupted) && st.ObservedGeneration == pdb.Generation && conditionUpToDate(pdb) {
		return recheck, nil
	}
	next := pdb.DeepCopy()
	next.Status = policyv1.PodDisruptionBudgetStatus{CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected,
		DisruptionsAllowed: allowed, DisruptedPods: disrupted, ObservedGeneration: pdb.Generation, Conditions: pdb.Status.Conditions}
	if allowed > 0 {
		dc.setCondition(next, metav1.ConditionTrue, policyv1.SufficientPodsReason, "", next.Status.ObservedGeneration)
	} else {
		dc.setCondition(next, metav1.ConditionFalse, policyv1.InsufficientPodsReason, "", next.Status.ObservedGeneration)
	}
	return recheck, dc.putStatus(ctx, next)
}

func (dc *disruptionController) setCondition(pdb *policyv1.PodDisruptionBudget, status metav1.ConditionStatus, reason, message string, generation int64) {
	apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: status,
		Reason: reason, Message: message, ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(dc.now())})
}

func (dc *disruptionController) putStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	pdb.APIVersion, pdb.Kind = "policy/v1", "PodDisruptionBudget"
	return dc.c.Do(ctx, "PUT", namedPath("policy/v1", "poddisruptionbudgets", pdb.Namespace, pdb.Name)+"/status", pdb, nil)
}

// conditionUpToDate reports whether pdb's DisruptionAllowed condition says
// what its status does.
func conditionUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil || pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
	}
	return cond.Status == metav1.ConditionFalse && cond.Reason == policyv1.InsufficientPodsReason
}

func disruptedEqual(a, b map[string]metav1.Time) bool {
	return len(a) == len(b) && maps.EqualFunc(a, b, func(x, y metav1.Time) bool { return x.Equal(&y) })
}

// pods lists the pods pdb selects.
func (dc *disruptionController) pods(ctx context.Context, pdb *policyv1.PodDisruptionBudget) ([]corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	if pdb.Spec.Selector == nil {
		return nil, nil
	}
	var l corev1.PodList
	err = dc.reads.Get(authn.WithUser(ctx, informerUser), workloadCollection("", "pods", pdb.Namespace)+labelSelectorQuery(sel.String()), &l)
	return l.Items, err
}

// expectedPods says how many pods pdb expects and how many of them must be
// healthy: for minAvailable as a number, the pods there are; otherwise the
// sum of their controllers' scales.
func (dc *disruptionController) expectedPods(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []corev1.Pod) (expected, desired int32, unmanaged bool, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = dc.expectedScale(ctx, pods); err != nil {
			return
		}
		var maxUnavailable int
		if maxUnavailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true); err != nil {
			return
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired, expected = pdb.Spec.MinAvailable.IntVal, int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		if expected, unmanaged, err = dc.expectedScale(ctx, pods); err != nil {
			return
		}
		var minAvailable int
		minAvailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		desired = int32(minAvailable)
	}
	return
}

// expectedScale sums the scales of the pods' controllers (a Deployment's
// for the pods of its ReplicaSets); unmanaged says some pods have none.
func (dc *disruptionController) expectedScale(ctx context.Context, pods []corev1.Pod) (expected int32, unmanaged bool, err error) {
	scales := map[types.UID]int32{}
	for i := range pods {
		ref := metav1.GetControllerOf(&pods[i])
		if ref == nil {
			unmanaged = true
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		uid, replicas, found, err := dc.controllerScale(ctx, ref, pods[i].Namespace)
		if err != nil {
			return 0, false, err
		}
		if !found {
			return 0, false, fmt.Errorf("found no controllers for pod %q", pods[i].Name)
		}
		scales[uid] = replicas
	}
	for _, n := range scales {
		expected += n
	}
	return expected, unmanaged, nil
}

// controllerScale finds the scale of the controller ref names in ns: a
// ReplicaSet's Deployment's, or the controller's own through /scale.
func (dc *disruptionController) controllerScale(ctx context.Context, ref *metav1.OwnerReference, ns string) (types.UID, int32, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", 0, false, err
	}
	if ref.Kind == "ReplicaSet" && (gv.Group == "apps" || gv.Group == "extensions") {
		var rs appsv1.ReplicaSet
		if err := dc.c.Get(ctx, namedPath("apps/v1", "replicasets", ns, ref.Name), &rs); err == nil && rs.UID == ref.UID {
			if owner := metav1.GetControllerOf(&rs); owner != nil && owner.Kind == "Deployment" {
				var d appsv1.Deployment
				if err := dc.c.Get(ctx, namedPath("apps/v1", "deployments", ns, owner.Name), &d); err == nil && d.UID == owner.UID {
					return d.UID, deref(d.Spec.Replicas), true, nil
				}
			}
		}
	}
	gvr, err := resourceFor(ctx, dc.c, ref.APIVersion, ref.Kind)
	if err != nil {
		return "", 0, false, err
	}
	scale, err := getScale(ctx, dc.c, gvr, ns, ref.Name)
	if apierrors.IsNotFound(err) {
		if !hasScale(ctx, dc.c, gvr) {
			return "", 0, false, fmt.Errorf("%s does not implement the scale subresource", gvr.GroupResource())
		}
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if scale.UID != ref.UID {
		return "", 0, false, nil
	}
	return scale.UID, scale.Spec.Replicas, true, nil
}

// disruptedPods keeps, of the evictions pdb records, those whose pod may
// yet be deleted (a pod not deleted evictionDeletionTimeout after its
// eviction is warned about and forgotten); recheck is when the next of
// them expires.
func (dc *disruptionController) disruptedPods(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []corev1.Pod, now time.Time) (map[string]metav1.Time, time.Duration) {
	kept := map[string]metav1.Time{}
	var recheck time.Duration
	if pdb.Status.DisruptedPods == nil {
		return kept, 0
	}
	for i := range pods {
		pod := &pods[i]
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if pod.DeletionTimestamp != nil || !ok {
			continue
		}
		expires := at.Add(evictionDeletionTimeout)
		if expires.Before(now) {
			// As kube-controller-manager says it (the namespace twice).
			dc.events.event(ctx, metaRef("v1", "Pod", pod.ObjectMeta), "Warning", "NotDeleted",
				fmt.Sprintf("Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Namespace))
			continue
		}
		if wait := expires.Sub(now); recheck == 0 || wait < recheck {
			recheck = wait
		}
		kept[pod.Name] = at
	}
	return kept, recheck
}
