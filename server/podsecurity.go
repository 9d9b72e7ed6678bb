package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psapi "k8s.io/pod-security-admission/api"
	pspolicy "k8s.io/pod-security-admission/policy"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/catalog"
)

// The PodSecurity admission plugin, as kube-apiserver runs it: by default
// with no exemptions, and privileged:latest for the enforce, audit and warn
// modes of a namespace without pod-security.kubernetes.io labels; or as a
// PodSecurityConfiguration says. The Pod Security Standards' checks
// themselves are k8s.io/pod-security-admission's policy package; the plugin
// around them (which namespaces, pods and workloads it looks at, its
// messages, warnings and audit annotations) is kubeplay's, written to
// kube-apiserver's behaviour.

// PodSecurityConfiguration is what kube-apiserver's PodSecurity plugin
// reads from its --admission-control-config-file (a
// pod-security.admission.config.k8s.io PodSecurityConfiguration; see
// package admissionconfig): the policy of a namespace without
// pod-security.kubernetes.io labels, and who and what is exempt from it.
type PodSecurityConfiguration struct {
	// Defaults is the level and version of each mode where a namespace's
	// labels set none.
	Defaults psapi.Policy
	// Exempt requests are let through unchecked: those of these users,
	// into these namespaces, and pods of these runtime classes.
	ExemptUsernames, ExemptNamespaces, ExemptRuntimeClasses []string
}

// defaultPodSecurity is kube-apiserver's configuration when its file gives
// none: privileged:latest in every mode, no exemptions.
func defaultPodSecurity() *PodSecurityConfiguration {
	privileged := psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()}
	return &PodSecurityConfiguration{Defaults: psapi.Policy{Enforce: privileged, Audit: privileged, Warn: privileged}}
}

// exemption is the reason a request into namespace ns by user is exempt
// ("namespace", "user"), "" if it is not.
func (c *PodSecurityConfiguration) exemption(ns, user string) string {
	switch {
	case c.exemptNamespace(ns):
		return "namespace"
	case user != "" && slices.Contains(c.ExemptUsernames, user):
		return "user"
	}
	return ""
}

// exemptNamespace says whether requests into namespace ns are exempt.
func (c *PodSecurityConfiguration) exemptNamespace(ns string) bool {
	return ns != "" && slices.Contains(c.ExemptNamespaces, ns)
}

// exemptRuntimeClass says whether a pod of runtime class name is exempt.
func (c *PodSecurityConfiguration) exemptRuntimeClass(name string) bool {
	return name != "" && slices.Contains(c.ExemptRuntimeClasses, name)
}

// podSecurityTarget says where the PodSecurity plugin finds the pod an
// object stands for (strategy.podSecurity).
type podSecurityTarget struct {
	// template is the path of the pod template a workload holds, which
	// the plugin warns and audits about but never enforces; nil for a Pod,
	// checked in every mode.
	template []string
}

// podSecurityPod is the Pod's target: the pod itself.
var podSecurityPod = &podSecurityTarget{}

// podSecurityTemplate is a workload's target: its pod template at path.
func podSecurityTemplate(path ...string) *podSecurityTarget {
	return &podSecurityTarget{template: path}
}

// podSecurityIgnoredSubresources are the pod subresources the plugin lets
// through unchecked; any other (ephemeralcontainers, resize) writes the pod.
var podSecurityIgnoredSubresources = map[string]bool{
	"exec": true, "attach": true, "binding": true, "eviction": true, "log": true,
	"portforward": true, "proxy": true, "status": true,
}

// The plugin's limits on checking a namespace's pods against a new
// enforce level: the first 3000 pods, for at most a second (of the
// sandbox's clock; kube-apiserver also stops at half the request's time
// left, which its 60 s request timeout leaves longer).
const (
	podSecurityMaxPodsToCheck = 3000
	podSecurityPodCheckTime   = time.Second
)

// podSecurityEvaluator is the Pod Security Standards' checks as release
// 1.minor has them: "latest" is that release's version (kube-apiserver
// lowers it to the version it emulates).
func (s *admission) podSecurityEvaluator(minor int) (pspolicy.Evaluator, error) {
	if e, ok := s.podSecurityEvaluators.Load(minor); ok {
		return e.(pspolicy.Evaluator), nil
	}
	v := psapi.MajorMinorVersion(1, minor)
	e, err := pspolicy.NewEvaluator(pspolicy.DefaultChecks(), &v)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	s.podSecurityEvaluators.Store(minor, e)
	return e, nil
}

// admitPodSecurity is the PodSecurity plugin's validation of a create (old
// nil), an update, or a delete (obj nil), which it lets through.
func (s *admission) admitPodSecurity(ctx context.Context, req *request, obj, old object) error {
	st := req.store.strategy
	if obj == nil || (!st.isNamespace && st.podSecurity == nil) {
		return nil
	}
	stage := audit.Stage{Phase: audit.Validating, Plugin: "PodSecurity"}
	rec := audit.FromContext(ctx)
	// exempt lets an exempt request through, saying why in the audit
	// annotations.
	exempt := func() bool {
		reason := s.podSecurity.exemption(req.namespace, authn.UserFrom(ctx).Name)
		if reason != "" {
			rec.Annotate(psapi.AuditAnnotationPrefix+psapi.ExemptionReasonAnnotationKey, reason)
		}
		return reason != ""
	}
	switch {
	case st.isNamespace:
		if req.subresource != "" {
			return nil
		}
		return rec.Ran(stage, s.podSecurityNamespace(ctx, req, obj, old))
	case st.podSecurity.template == nil:
		if podSecurityIgnoredSubresources[req.subresource] {
			return nil
		}
		if exempt() {
			return rec.Ran(stage, nil)
		}
		if old != nil && !significantPodUpdate(obj, old) {
			return rec.Ran(stage, nil)
		}
		return rec.Ran(stage, s.podSecurityCheck(ctx, req, obj, obj, true))
	default:
		if req.subresource != "" {
			return nil
		}
		if exempt() {
			return rec.Ran(stage, nil)
		}
		path := st.podSecurity.template
		template, _ := jsonmap.Child(obj, path[:len(path)-1]...)[path[len(path)-1]].(map[string]any)
		if template == nil {
			return rec.Ran(stage, nil) // a ReplicationController may have none
		}
		return rec.Ran(stage, s.podSecurityCheck(ctx, req, obj, template, false))
	}
}

// podSecurityCheck checks pod (a Pod, or the pod template of the workload
// obj) against the policy of its namespace: its audit level in the audit
// annotations, its warn level as warnings, and, when enforce, its enforce
// level, whose violation is the 403 it returns.
func (s *admission) podSecurityCheck(ctx context.Context, req *request, obj, pod object, enforce bool) error {
	rec := audit.FromContext(ctx)
	annotate := func(key, value string) { rec.Annotate(psapi.AuditAnnotationPrefix+key, value) }
	ns, _, err := s.getObject(ctx, catalog.LookupBuiltin(namespacesGVR), "", req.namespace)
	if err != nil { // only in a race with the namespace's deletion: NamespaceLifecycle ran first
		if enforce {
			refused := apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", req.namespace))
			annotate("error", fmt.Sprintf("%s: %v", refused.ErrStatus.Message, err))
			return refused
		}
		annotate("error", fmt.Sprintf("failed to lookup namespace %q: %v", req.namespace, err))
		return nil
	}
	nsPolicy, policyErrs := s.podSecurityPolicy(metadata(ns))
	if len(policyErrs) == 0 {
		if enforce && nsPolicy.FullyPrivileged() {
			annotate(psapi.EnforcedPolicyAnnotationKey, psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()}.String())
			return nil
		}
		if !enforce && nsPolicy.Warn.Level == psapi.LevelPrivileged && nsPolicy.Audit.Level == psapi.LevelPrivileged {
			return nil
		}
	}
	var p corev1.Pod
	if err := decodeInto(pod, &p); err != nil {
		if enforce {
			annotate("error", "failed to decode object: "+err.Error())
			return apierrors.NewBadRequest("failed to decode object")
		}
		annotate("error", "failed to extract pod template: "+err.Error())
		return nil
	}
	if p.Spec.RuntimeClassName != nil && s.podSecurity.exemptRuntimeClass(*p.Spec.RuntimeClassName) {
		annotate(psapi.ExemptionReasonAnnotationKey, "runtimeClass")
		return nil
	}
	evaluator, err := s.podSecurityEvaluator(s.emulatedMinor())
	if err != nil {
		return err
	}
	if len(policyErrs) > 0 {
		annotate("error", "Failed to parse policy: "+policyErrs.ToAggregate().Error())
	}
	results := map[psapi.LevelVersion]pspolicy.AggregateCheckResult{}
	check := func(lv psapi.LevelVersion) pspolicy.AggregateCheckResult {
		r, ok := results[lv]
		if !ok {
			r = pspolicy.AggregateCheckResults(evaluator.EvaluatePod(lv, &p.ObjectMeta, &p.Spec))
			results[lv] = r
		}
		return r
	}
	var denied error
	if enforce {
		annotate(psapi.EnforcedPolicyAnnotationKey, nsPolicy.Enforce.String())
		if r := check(nsPolicy.Enforce); !r.Allowed {
			denied = apierrors.NewForbidden(req.res.GroupResource(), str(metadata(obj), "name"),
				fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), r.ForbiddenDetail()))
		}
	}
	if r := check(nsPolicy.Audit); !r.Allowed {
		annotate(psapi.AuditViolationsAnnotationKey, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Audit.String(), r.ForbiddenDetail()))
	}
	// A request refused is not warned about too.
	if denied == nil {
		if r := check(nsPolicy.Warn); !r.Allowed {
			warn(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), r.ForbiddenDetail()))
		}
	}
	return denied
}

// podSecurityNamespace checks a namespace's pod-security.kubernetes.io
// labels (the 422 for a bad one, on create or when an update changes the
// errors), and warns of the namespace's pods that break a new, stricter
// enforce level.
func (s *admission) podSecurityNamespace(ctx context.Context, req *request, obj, old object) error {
	name := str(metadata(obj), "name")
	newPolicy, newErrs := s.podSecurityPolicy(metadata(obj))
	invalid := func() error {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, name, newErrs)
	}
	exempt := s.podSecurity.exemptNamespace(name)
	if old == nil {
		if len(newErrs) > 0 {
			return invalid()
		}
		if exempt {
			s.warnExemptNamespace(ctx, name, newPolicy, metadata(obj))
		}
		return nil
	}
	oldPolicy, oldErrs := s.podSecurityPolicy(metadata(old))
	if len(newErrs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(newErrs, oldErrs)) {
		return invalid()
	}
	// Existing pods are checked only against an enforce level that is new
	// and stricter, or of another version.
	switch enforce, was := newPolicy.Enforce, oldPolicy.Enforce; {
	case enforce == was, enforce.Level == psapi.LevelPrivileged,
		enforce.Version == was.Version && psapi.CompareLevels(enforce.Level, was.Level) < 1:
		return nil
	case exempt:
		s.warnExemptNamespace(ctx, name, newPolicy, metadata(obj))
		return nil
	}
	warnings, err := s.podSecurityExistingPods(ctx, name, newPolicy.Enforce)
	if err != nil {
		return err
	}
	warn(ctx, warnings...)
	return nil
}

// warnExemptNamespace warns that the policy that the labels of exempt
// namespace ns (in its metadata md) set is ignored, naming the modes they
// set that are not privileged; not if the policy is privileged or the
// default.
func (s *admission) warnExemptNamespace(ctx context.Context, ns string, policy psapi.Policy, md map[string]any) {
	if policy.FullyPrivileged() || policy.Equivalent(&s.podSecurity.Defaults) {
		return
	}
	labels := jsonmap.Child(md, "labels")
	var set []string
	for _, mode := range []struct {
		name                 string
		lv                   psapi.LevelVersion
		levelKey, versionKey string
	}{
		{"enforce", policy.Enforce, psapi.EnforceLevelLabel, psapi.EnforceVersionLabel},
		{"audit", policy.Audit, psapi.AuditLevelLabel, psapi.AuditVersionLabel},
		{"warn", policy.Warn, psapi.WarnLevelLabel, psapi.WarnVersionLabel},
	} {
		_, level := labels[mode.levelKey]
		_, version := labels[mode.versionKey]
		if mode.lv.Level != psapi.LevelPrivileged && (level || version) {
			set = append(set, mode.name+"="+mode.lv.String())
		}
	}
	warn(ctx, fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", ns, strings.Join(set, ", ")))
}

// podSecurityExistingPods are the warnings about the pods of namespace ns
// that break enforce, as kube-apiserver words them: one per distinct set of
// violations, naming its lexically first pod and how many others share it,
// checking one pod of each controller before the others, within the
// plugin's limits.
func (s *admission) podSecurityExistingPods(ctx context.Context, ns string, enforce psapi.LevelVersion) ([]string, error) {
	deadline := s.now().Add(podSecurityPodCheckTime)
	res := catalog.LookupBuiltin(podsResource)
	list, err := s.store.List(ctx, collectionPrefix(res, ns), "", 0, 0)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}, nil
	}
	evaluator, err := s.podSecurityEvaluator(s.emulatedMinor())
	if err != nil {
		return nil, err
	}
	var first, replicated []*corev1.Pod
	controllers := map[string]bool{}
	for _, kv := range list.Items {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		p := &corev1.Pod{}
		if err := decodeInto(obj, p); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if p.Spec.RuntimeClassName != nil && s.podSecurity.exemptRuntimeClass(*p.Spec.RuntimeClassName) {
			continue
		}
		switch ref := metav1.GetControllerOfNoCopy(p); {
		case ref == nil:
			first = append(first, p)
		case controllers[string(ref.UID)]:
			replicated = append(replicated, p)
		default:
			controllers[string(ref.UID)] = true
			first = append(first, p)
		}
	}
	pods := append(first, replicated...)
	total := len(pods)
	if len(pods) > podSecurityMaxPodsToCheck {
		pods = pods[:podSecurityMaxPodsToCheck]
	}
	type violators struct {
		first string // the lexically first pod's name
		count int
	}
	var reasons []string
	byReason := map[string]violators{}
	checked := len(pods)
	for i, p := range pods {
		if r := pspolicy.AggregateCheckResults(evaluator.EvaluatePod(enforce, &p.ObjectMeta, &p.Spec)); !r.Allowed {
			reason := r.ForbiddenReason()
			v, seen := byReason[reason]
			if !seen {
				reasons = append(reasons, reason)
			}
			if !seen || p.Name < v.first {
				v.first = p.Name
			}
			v.count++
			byReason[reason] = v
		}
		if s.now().After(deadline) {
			checked = i + 1
			break
		}
	}
	var warnings []string
	if checked < total {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(reasons) > 0 {
		warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", ns, enforce.String()))
	}
	for i, reason := range reasons {
		switch v := byReason[reason]; v.count {
		case 1:
			reasons[i] = fmt.Sprintf("%s: %s", v.first, reason)
		case 2:
			reasons[i] = fmt.Sprintf("%s (and 1 other pod): %s", v.first, reason)
		default:
			reasons[i] = fmt.Sprintf("%s (and %d other pods): %s", v.first, v.count-1, reason)
		}
	}
	sort.Strings(reasons)
	return append(warnings, reasons...), nil
}

// podSecurityPolicy is the policy a namespace's labels (in its metadata
// md) set, the configuration's defaults where they set none, and what is
// wrong with them.
func (s *admission) podSecurityPolicy(md map[string]any) (psapi.Policy, field.ErrorList) {
	labels := map[string]string{}
	for k, v := range jsonmap.Child(md, "labels") {
		labels[k], _ = v.(string)
	}
	return psapi.PolicyToEvaluate(labels, s.podSecurity.Defaults)
}

// significantPodUpdate reports whether an update of a pod changes what
// the plugin checks again: its containers' images, their number, or an
// ephemeral container added or with a new image. (Pod validation lets
// little else of a pod's spec change.)
func significantPodUpdate(obj, old object) bool {
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	for _, key := range []string{"containers", "initContainers"} {
		list, oldList := jsonmap.Items(spec[key]), jsonmap.Items(oldSpec[key])
		if len(list) != len(oldList) {
			return true
		}
		for i := range list {
			if str(list[i], "image") != str(oldList[i], "image") {
				return true
			}
		}
	}
	oldEphemeral := jsonmap.Items(oldSpec["ephemeralContainers"])
	for _, c := range jsonmap.Items(spec["ephemeralContainers"]) {
		i := slices.IndexFunc(oldEphemeral, func(o map[string]any) bool { return str(o, "name") == str(c, "name") })
		if i < 0 || str(c, "image") != str(oldEphemeral[i], "image") {
			return true
		}
	}
	return false
}

// decodeInto decodes the JSON object obj into out (numbers included, whatever
// their Go representation).
func decodeInto(obj map[string]any, out any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
