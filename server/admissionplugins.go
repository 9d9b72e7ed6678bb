package server

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
)

// admitPod runs the LimitRanger, ServiceAccount, Priority,
// DefaultTolerationSeconds, RuntimeClass and PodTopologyLabels plugins on a new Pod in namespace ns (see
// defaults.LimitPod and defaults.AdmitPod). LimitRanger sets the defaults
// now and bounds the resources in the validating phase, as kube-apiserver
// does, so a pod the Priority plugin or validation rejects is rejected
// for that. The ServiceAccount plugin refuses a pod whose ServiceAccount
// does not exist, as kube-apiserver's: in a namespace just created, until
// the serviceaccount controller has made its default one.
func (s *admission) admitPod(ctx context.Context, res *catalog.Resource, ns string, obj object) (func(podSecurity func() error) error, error) {
	spec, _ := obj["spec"].(map[string]any)
	ranges, err := s.limitRanges(ctx, ns)
	if err != nil {
		return nil, err
	}
	rec := audit.FromContext(ctx)
	name := str(metadata(obj), "name")
	var beyondLimits error
	if err := defaults.LimitPod(metadata(obj), spec, ranges); err != nil {
		beyondLimits = apierrors.NewForbidden(res.GroupResource(), name, err)
	}
	rec.Ran(mutating("LimitRanger"), nil)
	validate := func() error {
		return rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: "LimitRanger"}, beyondLimits)
	}
	automount := false
	// A mirror pod is left as its kubelet wrote it, with no ServiceAccount.
	_, mirror := jsonmap.Child(metadata(obj), "annotations")["kubernetes.io/config.mirror"]
	if !s.noServiceAccountAdmission && !mirror {
		saName := defaults.PodServiceAccount(spec)
		sa, _, err := s.getObject(ctx, catalog.LookupBuiltin(serviceAccountsGVR), ns, saName)
		switch {
		case apierrors.IsNotFound(err):
			return nil, rec.Ran(mutating("ServiceAccount"), apierrors.NewForbidden(res.GroupResource(), name,
				fmt.Errorf("error looking up service account %s/%s: serviceaccount %q not found", ns, saName, saName)))
		case err != nil:
			return nil, err
		}
		automount = true
		if v, ok := sa["automountServiceAccountToken"].(bool); ok {
			automount = v
		}
	}
	class, err := s.podPriorityClass(ctx, spec)
	if err != nil {
		if _, ok := err.(notFoundClass); ok {
			err = apierrors.NewForbidden(res.GroupResource(), name, err)
		}
		return nil, rec.Ran(mutating("Priority"), err)
	}
	msg := defaults.AdmitPod(spec, automount, GenerateName("kube-api-access-"), class)
	// AdmitPod runs the three plugins; only Priority rejects.
	if !s.noServiceAccountAdmission && !mirror {
		rec.Ran(mutating("ServiceAccount"), nil)
	}
	if msg != "" {
		return nil, rec.Ran(mutating("Priority"), apierrors.NewForbidden(res.GroupResource(), name, errors.New(msg)))
	}
	rec.Ran(mutating("Priority"), nil)
	rec.Ran(mutating("DefaultTolerationSeconds"), nil)
	runtimeClass, err := s.podRuntimeClass(ctx, res, name, spec)
	if err == nil {
		if msg := defaults.AdmitRuntimeClass(spec, runtimeClass); msg != "" {
			err = apierrors.NewForbidden(res.GroupResource(), name, errors.New(msg))
		}
	}
	if err := rec.Ran(mutating("RuntimeClass"), err); err != nil {
		return nil, err
	}
	if err := s.admitPodTopology(ctx, str(spec, "nodeName"), metadata(obj)); err != nil {
		return nil, err
	}
	return func(podSecurity func() error) error {
		if err := validate(); err != nil {
			return err
		}
		if err := podSecurity(); err != nil {
			return err
		}
		var mismatch error
		if msg := defaults.RuntimeClassOverheadMismatch(spec, runtimeClass); msg != "" {
			mismatch = apierrors.NewForbidden(res.GroupResource(), name, errors.New(msg))
		}
		return rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: "RuntimeClass"}, mismatch)
	}, nil
}

var runtimeClassesGVR = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}

// podRuntimeClass is the RuntimeClass a new pod names (nil if none); the
// RuntimeClass plugin forbids a pod naming one that does not exist.
func (s *admission) podRuntimeClass(ctx context.Context, res *catalog.Resource, name string, spec map[string]any) (map[string]any, error) {
	className, _ := spec["runtimeClassName"].(string)
	if className == "" {
		return nil, nil
	}
	class, _, err := s.getObject(ctx, catalog.LookupBuiltin(runtimeClassesGVR), "", className)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewForbidden(res.GroupResource(), name, fmt.Errorf("pod rejected: RuntimeClass %q not found", className))
	}
	return class, err
}

func mutating(plugin string) audit.Stage { return audit.Stage{Phase: audit.Mutating, Plugin: plugin} }

func validating(plugin string) audit.Stage {
	return audit.Stage{Phase: audit.Validating, Plugin: plugin}
}

var priorityClassesGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}

// notFoundClass is a pod's PriorityClass that does not exist.
type notFoundClass string

func (n notFoundClass) Error() string {
	return fmt.Sprintf("no PriorityClass with name %s was found", string(n))
}

// podPriorityClass is the PriorityClass the Priority plugin gives a new
// pod: the one it names, or the global default (the one of lowest value if
// several claim it).
func (s *admission) podPriorityClass(ctx context.Context, spec map[string]any) (defaults.PriorityClass, error) {
	res := catalog.LookupBuiltin(priorityClassesGVR)
	of := func(pc map[string]any) defaults.PriorityClass {
		value, _ := jsonmap.IntOf(pc["value"])
		policy, _ := pc["preemptionPolicy"].(string)
		return defaults.PriorityClass{Name: str(metadata(pc), "name"), Value: value, PreemptionPolicy: policy}
	}
	if name, _ := spec["priorityClassName"].(string); name != "" {
		pc, _, err := s.getObject(ctx, res, "", name)
		switch {
		case apierrors.IsNotFound(err):
			if class, ok := defaults.BuiltinPriorityClass(name); ok {
				return class, nil
			}
			return defaults.PriorityClass{}, notFoundClass(name)
		case err != nil:
			return defaults.PriorityClass{}, err
		}
		return of(pc), nil
	}
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return defaults.PriorityClass{}, storeError(res, "", err)
	}
	var global defaults.PriorityClass
	found := false
	for _, kv := range list.Items {
		pc, err := decodeStored(res, kv)
		if err != nil {
			return defaults.PriorityClass{}, apierrors.NewInternalError(err)
		}
		if pc["globalDefault"] == true && (!found || of(pc).Value < global.Value) {
			global, found = of(pc), true
		}
	}
	return global, nil
}

var limitRangesGVR = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}

// limitRanges are the LimitRanges of namespace ns.
func (s *admission) limitRanges(ctx context.Context, ns string) ([]map[string]any, error) {
	res := catalog.LookupBuiltin(limitRangesGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, ns), "", 0, 0)
	if err != nil {
		return nil, storeError(res, "", err)
	}
	out := make([]map[string]any, 0, len(list.Items))
	for _, kv := range list.Items {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out = append(out, obj)
	}
	return out, nil
}
