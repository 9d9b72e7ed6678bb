package playground

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The protection controllers of kube-controller-manager keep a claim a pod
// uses, a volume bound to a claim, and a VolumeAttributesClass a claim or
// a volume names, from going away under them: the
// StorageObjectInUseProtection admission plugin gives each new one a
// finalizer, which they remove once the object is being deleted and no
// longer in use (and add to an object that lacks it).

const (
	pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
	pvProtectionFinalizer  = "kubernetes.io/pv-protection"
	vacProtectionFinalizer = "kubernetes.io/vac-protection"
)

var (
	pvcProtectionDef = controllerDef{name: "pvcProtection", title: "pvc-protection controller", serviceAccount: "pvc-protection-controller",
		start: func(sb *Sandbox) reconciler {
			return &pvcProtection{c: inproc.New(sb.handler, controllerAgent("pvc-protection-controller"))}
		}}
	pvProtectionDef = controllerDef{name: "pvProtection", title: "pv-protection controller", serviceAccount: "pv-protection-controller",
		start: func(sb *Sandbox) reconciler {
			return &pvProtection{c: inproc.New(sb.handler, controllerAgent("pv-protection-controller"))}
		}}
	vacProtectionDef = controllerDef{name: "vacProtection", title: "volumeattributesclass-protection controller", serviceAccount: vacProtectionSA,
		start: func(sb *Sandbox) reconciler {
			return &vacProtection{c: inproc.New(sb.handler, controllerAgent(vacProtectionSA))}
		}}
)

const vacProtectionSA = "volumeattributesclass-protection-controller"

// protectionWork reports whether o needs its protection controller: it
// lacks the finalizer, or it is being deleted and has it.
func protectionWork(o jsonmap.Object, finalizer string) bool {
	has := slices.Contains(jsonmap.Strings(o, "metadata", "finalizers"), finalizer)
	return has == deleting(o)
}

// setFinalizer adds finalizer to, or removes it from, o's finalizers, and
// writes o.
func setFinalizer(ctx context.Context, c *inproc.Client, path string, o jsonmap.Object, finalizer string, on bool) error {
	o = copyMap(o)
	md := meta(o)
	finalizers := slices.DeleteFunc(jsonmap.Strings(o, "metadata", "finalizers"), func(f string) bool { return f == finalizer })
	if on {
		finalizers = append(finalizers, finalizer)
	}
	if len(finalizers) == 0 {
		delete(md, "finalizers")
	} else {
		md["finalizers"] = finalizers
	}
	err := c.Do(ctx, "PUT", path, o, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// pvcProtection removes a deleted claim's finalizer once no pod on a node
// uses it. Its keys are "<namespace>/<name>" of claims.
type pvcProtection struct {
	c *inproc.Client
}

func (p *pvcProtection) resync(ctx context.Context, _ int64) ([]string, error) {
	claims, err := list(ctx, p.c, "/api/v1/persistentvolumeclaims")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, claim := range claims {
		if protectionWork(claim, pvcProtectionFinalizer) {
			keys = append(keys, claimKey(claim))
		}
	}
	return keys, nil
}

func (p *pvcProtection) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, claimKeyPrefix); ok {
		if ev.Type != store.Deleted {
			q.Add(name)
		}
		return
	}
	if !strings.HasPrefix(ev.KV.Key, podKeyPrefix) || !strings.Contains(string(ev.KV.Value), `"volumes"`) {
		return
	}
	// A pod that stops using its claims may free them: it goes away, or
	// it is shut down.
	pod, err := decodeObject(ev.KV.Value)
	if err != nil {
		return
	}
	if ev.Type == store.Deleted || deleting(pod) || podTerminated(pod) {
		ns := jsonmap.String(pod, "metadata", "namespace")
		for _, name := range podClaims(pod) {
			q.Add(ns + "/" + name)
		}
	}
}

func (p *pvcProtection) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	path := claimPath(ns, name)
	claim, err := get(ctx, p.c, path)
	if err != nil || claim == nil || !protectionWork(claim, pvcProtectionFinalizer) {
		return 0, err
	}
	if !deleting(claim) {
		return 0, setFinalizer(ctx, p.c, path, claim, pvcProtectionFinalizer, true)
	}
	used, err := p.inUse(ctx, claim)
	if err != nil || used {
		return 0, err
	}
	return 0, setFinalizer(ctx, p.c, path, claim, pvcProtectionFinalizer, false)
}

// inUse reports whether a pod bound to a node uses the claim: by name, or
// as the ephemeral volume it owns, until the pod is shut down.
func (p *pvcProtection) inUse(ctx context.Context, claim jsonmap.Object) (bool, error) {
	ns, name := jsonmap.String(claim, "metadata", "namespace"), jsonmap.String(claim, "metadata", "name")
	pods, err := list(ctx, p.c, workloadCollection("", "pods", ns))
	if err != nil {
		return false, err
	}
	claimOwner, _ := controllerUID(claim)
	for _, pod := range pods {
		if jsonmap.String(pod, "spec", "nodeName") == "" {
			continue
		}
		shutDown := false
		if grace, ok := jsonmap.Int(pod, "metadata", "deletionGracePeriodSeconds"); ok && grace == 0 && deleting(pod) {
			shutDown = true
		}
		podName := jsonmap.String(pod, "metadata", "name")
		for _, v := range jsonmap.Items(jsonmap.Child(pod, "spec")["volumes"]) {
			if jsonmap.String(v, "persistentVolumeClaim", "claimName") == name {
				return true, nil
			}
			if !shutDown && jsonmap.Child(v, "ephemeral") != nil && podName+"-"+jsonmap.String(v, "name") == name &&
				claimOwner == jsonmap.String(pod, "metadata", "uid") {
				return true, nil
			}
		}
	}
	return false, nil
}

// pvProtection removes a deleted volume's finalizer once it is not bound.
// Its keys are volume names.
type pvProtection struct {
	c *inproc.Client
}

func (p *pvProtection) resync(ctx context.Context, _ int64) ([]string, error) {
	pvs, err := list(ctx, p.c, "/api/v1/persistentvolumes")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, pv := range pvs {
		if protectionWork(pv, pvProtectionFinalizer) {
			keys = append(keys, jsonmap.String(pv, "metadata", "name"))
		}
	}
	return keys, nil
}

func (p *pvProtection) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, volumeKeyPrefix); ok && ev.Type != store.Deleted {
		q.Add(name)
	}
}

func (p *pvProtection) reconcile(ctx context.Context, name string) (time.Duration, error) {
	path := volumePath(name)
	pv, err := get(ctx, p.c, path)
	if err != nil || pv == nil || !protectionWork(pv, pvProtectionFinalizer) {
		return 0, err
	}
	if !deleting(pv) {
		return 0, setFinalizer(ctx, p.c, path, pv, pvProtectionFinalizer, true)
	}
	if jsonmap.String(pv, "status", "phase") == "Bound" {
		return 0, nil
	}
	return 0, setFinalizer(ctx, p.c, path, pv, pvProtectionFinalizer, false)
}

var (
	vacsV1         = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattributesclasses"}
	vacKeyPrefix   = builtinKeyPrefix(vacsV1)
	vacNamePattern = regexp.MustCompile(`"(?:volumeAttributesClassName|currentVolumeAttributesClassName|targetVolumeAttributesClassName)":"([^"]*)"`)
)

// vacProtection removes a deleted VolumeAttributesClass's finalizer once no
// claim and no volume names it. Its keys are class names.
type vacProtection struct {
	c *inproc.Client
}

func (p *vacProtection) resync(ctx context.Context, _ int64) ([]string, error) {
	vacs, err := list(ctx, p.c, allPath(vacsV1))
	if apierrors.IsNotFound(err) {
		return nil, nil // a release before v1.34 serves no v1 classes
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, vac := range vacs {
		if protectionWork(vac, vacProtectionFinalizer) {
			keys = append(keys, jsonmap.String(vac, "metadata", "name"))
		}
	}
	return keys, nil
}

func (p *vacProtection) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, vacKeyPrefix); ok {
		if ev.Type != store.Deleted {
			q.Add(name)
		}
		return
	}
	if !strings.HasPrefix(ev.KV.Key, claimKeyPrefix) && !strings.HasPrefix(ev.KV.Key, volumeKeyPrefix) {
		return
	}
	// A claim or a volume that named a class may have freed it.
	if ev.Prev != nil {
		for _, m := range vacNamePattern.FindAllSubmatch(ev.Prev.Value, -1) {
			q.Add(string(m[1]))
		}
	}
}

func (p *vacProtection) reconcile(ctx context.Context, name string) (time.Duration, error) {
	path := allPath(vacsV1) + "/" + url.PathEscape(name)
	vac, err := get(ctx, p.c, path)
	if err != nil || vac == nil || !protectionWork(vac, vacProtectionFinalizer) {
		return 0, err
	}
	if !deleting(vac) {
		return 0, setFinalizer(ctx, p.c, path, vac, vacProtectionFinalizer, true)
	}
	for _, collection := range []string{"/api/v1/persistentvolumes", "/api/v1/persistentvolumeclaims"} {
		objs, err := list(ctx, p.c, collection)
		if err != nil {
			return 0, err
		}
		for _, o := range objs {
			if slices.Contains(vacNames(o), name) {
				return 0, nil
			}
		}
	}
	return 0, setFinalizer(ctx, p.c, path, vac, vacProtectionFinalizer, false)
}

// vacNames are the VolumeAttributesClasses a claim or a volume names: in
// its spec, as its current class, or as the target of a modification.
func vacNames(o jsonmap.Object) []string {
	var names []string
	for _, n := range []string{jsonmap.String(o, "spec", "volumeAttributesClassName"), jsonmap.String(o, "status", "currentVolumeAttributesClassName"),
		jsonmap.String(o, "status", "modifyVolumeStatus", "targetVolumeAttributesClassName")} {
		if n != "" {
			names = append(names, n)
		}
	}
	return names
}
