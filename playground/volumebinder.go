package playground

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// volumeBinder is kube-controller-manager's persistentvolume-binder
// controller: it binds claims to volumes (a volume the claim names, one
// pre-bound to it, or the smallest available one that fits), asks the
// class's provisioner for a volume when none fits, sets the phases of
// both, and reclaims the volume of a deleted claim by its reclaim policy.
//
// It also does what kube-scheduler's VolumeBinding plugin does before it
// binds a pod: for a claim of a WaitForFirstConsumer class used by a pod
// bound to a node, it binds a volume that node can reach, or records the
// node (volume.kubernetes.io/selected-node) for the provisioner. Those
// requests are the scheduler's, made as it. Here the pod is bound first
// (by the simulated scheduler) and the claim follows it.
//
// Its keys: "claim/<namespace>/<name>", "volume/<name>",
// "pod/<namespace>/<name>" (a scheduled pod that uses claims) and
// "pending" (a StorageClass changed or a volume became available: claims
// not bound yet may now get a default class, a provisioner or a volume).
type volumeBinder struct {
	c, scheduler *inproc.Client
	events       *eventRecorder
}

const (
	binderSA = "persistent-volume-binder"
	// pendingKey asks for a look at every claim not bound yet.
	pendingKey = "pending"
)

// schedulerUser is who kube-scheduler is (its agent: schedulerAgent), whose
// system:volume-scheduler role lets it bind volumes and select nodes.
var schedulerUser = &authn.User{Name: "system:kube-scheduler", Groups: []string{authn.Authenticated}}

var persistentVolumeBinderDef = controllerDef{name: "persistentVolumeBinder", title: "persistentvolume-binder controller", serviceAccount: binderSA,
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent(binderSA))
		return &volumeBinder{c: c, scheduler: inproc.New(sb.handler, schedulerAgent),
			events: newEventRecorder(c, "persistentvolume-controller", "", sb.clock.Now)}
	}}

var (
	claimKeyPrefix  = builtinKeyPrefix(coreV1("persistentvolumeclaims"))
	volumeKeyPrefix = builtinKeyPrefix(coreV1("persistentvolumes"))
	classKeyPrefix  = builtinKeyPrefix(storageClassesV1)
)

func (b *volumeBinder) resync(ctx context.Context, _ int64) ([]string, error) {
	claims, err := list(ctx, b.c, "/api/v1/persistentvolumeclaims")
	if err != nil {
		return nil, err
	}
	pvs, err := list(ctx, b.c, "/api/v1/persistentvolumes")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, claim := range claims {
		if jsonmap.String(claim, "status", "phase") != "Bound" {
			keys = append(keys, "claim/"+jsonmap.String(claim, "metadata", "namespace")+"/"+jsonmap.String(claim, "metadata", "name"))
		}
	}
	for _, pv := range pvs {
		if jsonmap.String(pv, "status", "phase") != "Bound" {
			keys = append(keys, "volume/"+jsonmap.String(pv, "metadata", "name"))
		}
	}
	return keys, nil
}

func (b *volumeBinder) keysOf(ev store.Event, q queue) {
	key := ev.KV.Key
	switch {
	case strings.HasPrefix(key, claimKeyPrefix):
		if ev.Type != store.Deleted {
			q.Add("claim/" + strings.TrimPrefix(key, claimKeyPrefix))
		} else if claim, err := decodeObject(ev.KV.Value); err == nil && jsonmap.String(claim, "spec", "volumeName") != "" {
			// Its volume is released.
			q.Add("volume/" + jsonmap.String(claim, "spec", "volumeName"))
		}
	case strings.HasPrefix(key, volumeKeyPrefix):
		q.Add("volume/" + strings.TrimPrefix(key, volumeKeyPrefix))
		if becameAvailable(ev) {
			// kube-controller-manager finds it for a waiting claim at its
			// next periodic look; here the change is the cue.
			q.Add(pendingKey)
		}
	case strings.HasPrefix(key, classKeyPrefix):
		if ev.Type != store.Deleted {
			q.Add(pendingKey)
		}
	case strings.HasPrefix(key, podKeyPrefix):
		podKeysOf(ev, q)
	}
}

// podKeysOf queues, for a pod that uses claims, its claims when it
// appears or is scheduled (what they wait for changed), and the pod when
// it is scheduled.
func podKeysOf(ev store.Event, q queue) {
	if ev.Type == store.Deleted || !strings.Contains(string(ev.KV.Value), `"volumes"`) {
		return
	}
	pod, err := decodeObject(ev.KV.Value)
	if err != nil {
		return
	}
	claims := podClaims(pod)
	if len(claims) == 0 {
		return
	}
	ns := jsonmap.String(pod, "metadata", "namespace")
	node := jsonmap.String(pod, "spec", "nodeName")
	wasScheduled := false
	if ev.Prev != nil {
		if prev, err := decodeObject(ev.Prev.Value); err == nil {
			wasScheduled = jsonmap.String(prev, "spec", "nodeName") != ""
		}
	}
	if ev.Type == store.Created || node != "" && !wasScheduled {
		for _, name := range claims {
			q.Add("claim/" + ns + "/" + name)
		}
	}
	if node != "" && !podTerminated(pod) {
		q.Add("pod/" + ns + "/" + jsonmap.String(pod, "metadata", "name"))
	}
}

// becameAvailable reports whether a volume change made it Available.
func becameAvailable(ev store.Event) bool {
	if ev.Type == store.Deleted || !strings.Contains(string(ev.KV.Value), `"phase":"Available"`) {
		return false
	}
	return ev.Prev == nil || !strings.Contains(string(ev.Prev.Value), `"phase":"Available"`)
}

func (b *volumeBinder) reconcile(ctx context.Context, key string) (time.Duration, error) {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "claim":
		ns, name, _ := strings.Cut(rest, "/")
		return 0, b.syncClaimKey(ctx, ns, name)
	case "volume":
		return 0, b.syncVolumeKey(ctx, rest)
	case "pod":
		ns, name, _ := strings.Cut(rest, "/")
		return 0, b.bindForPod(ctx, ns, name)
	case pendingKey:
		return 0, b.syncPendingClaims(ctx)
	}
	return 0, nil
}

func (b *volumeBinder) syncClaimKey(ctx context.Context, ns, name string) error {
	claim, err := get(ctx, b.c, claimPath(ns, name))
	if err != nil || claim == nil {
		return err
	}
	return b.syncClaim(ctx, claim)
}

// syncPendingClaims syncs every claim not bound yet.
func (b *volumeBinder) syncPendingClaims(ctx context.Context) error {
	claims, err := list(ctx, b.c, "/api/v1/persistentvolumeclaims")
	if err != nil {
		return err
	}
	for _, claim := range claims {
		if !hasAnnotation(claim, annBindCompleted) {
			if err := b.syncClaim(ctx, claim); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *volumeBinder) syncClaim(ctx context.Context, claim jsonmap.Object) error {
	if hasAnnotation(claim, annBindCompleted) {
		return b.syncBoundClaim(ctx, claim)
	}
	return b.syncUnboundClaim(ctx, claim)
}

func (b *volumeBinder) claimEvent(ctx context.Context, claim jsonmap.Object, eventType, reason, message string) {
	b.events.event(ctx, refTo(claim, "v1", "PersistentVolumeClaim"), eventType, reason, message)
}

func (b *volumeBinder) volumeEvent(ctx context.Context, pv jsonmap.Object, eventType, reason, message string) {
	b.events.event(ctx, refTo(pv, "v1", "PersistentVolume"), eventType, reason, message)
}

// class is the StorageClass name; nil if there is none.
func (b *volumeBinder) class(ctx context.Context, name string) (jsonmap.Object, error) {
	if name == "" {
		return nil, nil
	}
	return get(ctx, b.c, classPath(name))
}

func (b *volumeBinder) syncUnboundClaim(ctx context.Context, claim jsonmap.Object) error {
	volumeName := jsonmap.String(claim, "spec", "volumeName")
	if volumeName != "" {
		return b.syncClaimOfVolume(ctx, claim, volumeName)
	}
	class, err := b.class(ctx, claimClass(claim))
	if err != nil {
		return err
	}
	delay := class != nil && delaysBinding(class)
	pvs, err := list(ctx, b.c, "/api/v1/persistentvolumes")
	if err != nil {
		return err
	}
	if pv := findVolumeFor(claim, pvs, delay, nil); pv != nil {
		return b.bind(ctx, pv, claim)
	}
	if assigned, err := b.assignDefaultClass(ctx, claim); err != nil || assigned {
		return err // the claim's update syncs it again
	}
	switch {
	case delay && !hasAnnotation(claim, annSelectedNode):
		if err := b.waitForConsumerEvent(ctx, claim); err != nil {
			return err
		}
	case claimClass(claim) != "":
		return b.provision(ctx, claim, class)
	default:
		b.claimEvent(ctx, claim, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	}
	return b.putClaimStatus(ctx, claim, "Pending", nil)
}

// waitForConsumerEvent says what a claim of a WaitForFirstConsumer class
// waits for: a pod that uses it, or the scheduling of those that do.
func (b *volumeBinder) waitForConsumerEvent(ctx context.Context, claim jsonmap.Object) error {
	ns, name := jsonmap.String(claim, "metadata", "namespace"), jsonmap.String(claim, "metadata", "name")
	pods, err := list(ctx, b.c, workloadCollection("", "pods", ns))
	if err != nil {
		return err
	}
	var waiting []string
	for _, pod := range pods {
		if podTerminated(pod) || jsonmap.String(pod, "spec", "nodeName") != "" || !slices.Contains(podClaims(pod), name) {
			continue
		}
		waiting = append(waiting, jsonmap.String(pod, "metadata", "name"))
	}
	switch len(waiting) {
	case 0:
		b.claimEvent(ctx, claim, "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
	case 1:
		b.claimEvent(ctx, claim, "Normal", "WaitForPodScheduled", fmt.Sprintf("waiting for pod %s to be scheduled", waiting[0]))
	default:
		b.claimEvent(ctx, claim, "Normal", "WaitForPodScheduled", fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(waiting, ",")))
	}
	return nil
}

// assignDefaultClass gives a claim that asks for no class the default
// class, if there is one now (a default class made after the claim).
func (b *volumeBinder) assignDefaultClass(ctx context.Context, claim jsonmap.Object) (bool, error) {
	if claimHasClass(claim) {
		return false, nil
	}
	classes, err := list(ctx, b.c, allPath(storageClassesV1))
	if err != nil {
		return false, err
	}
	def := defaultClass(classes)
	if def == nil {
		return false, nil
	}
	claim = copyMap(claim)
	jsonmap.Child(claim, "spec")["storageClassName"] = jsonmap.String(def, "metadata", "name")
	return true, b.c.Do(ctx, "PUT", objectPath("", "persistentvolumeclaims", claim), claim, nil)
}

// provision asks the class's provisioner for a volume: it names it in the
// claim's annotations, which the provisioner (external to
// kube-controller-manager) watches for.
func (b *volumeBinder) provision(ctx context.Context, claim, class jsonmap.Object) error {
	if class == nil {
		b.claimEvent(ctx, claim, "Warning", "ProvisioningFailed", fmt.Sprintf("storageclass.storage.k8s.io %q not found", claimClass(claim)))
		return nil
	}
	provisioner := jsonmap.String(class, "provisioner")
	if annotation(claim, annStorageProvisioner) != provisioner || annotation(claim, annBetaStorageProvisioner) != provisioner {
		claim = copyMap(claim)
		setAnnotation(claim, annBetaStorageProvisioner, provisioner)
		setAnnotation(claim, annStorageProvisioner, provisioner)
		if err := b.c.Do(ctx, "PUT", objectPath("", "persistentvolumeclaims", claim), claim, &claim); err != nil {
			b.claimEvent(ctx, claim, "Warning", "ProvisioningFailed", "Error saving claim: "+err.Error())
			return err
		}
	}
	b.claimEvent(ctx, claim, "Normal", "ExternalProvisioning", fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", provisioner))
	return nil
}

// syncClaimOfVolume binds a claim that names its volume.
func (b *volumeBinder) syncClaimOfVolume(ctx context.Context, claim jsonmap.Object, volumeName string) error {
	pv, err := get(ctx, b.c, volumePath(volumeName))
	if err != nil {
		return err
	}
	switch {
	case pv == nil:
		return b.putClaimStatus(ctx, claim, "Pending", nil)
	case claimRef(pv) == nil:
		if reason := unsatisfied(pv, claim); reason != "" {
			b.claimEvent(ctx, claim, "Warning", "VolumeMismatch", fmt.Sprintf("Cannot bind to requested volume %q: %s", volumeName, reason))
			return b.putClaimStatus(ctx, claim, "Pending", nil)
		}
		return b.bind(ctx, pv, claim)
	case boundToClaim(pv, claim):
		return b.bind(ctx, pv, claim)
	default:
		b.claimEvent(ctx, claim, "Warning", "FailedBinding", fmt.Sprintf("volume %q already bound to a different claim.", volumeName))
		if hasAnnotation(claim, annBoundByController) {
			return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q", claimKey(claim), volumeName,
				jsonmap.String(claimRef(pv), "namespace")+"/"+jsonmap.String(claimRef(pv), "name"))
		}
		return b.putClaimStatus(ctx, claim, "Pending", nil)
	}
}

// claimKey is "<namespace>/<name>" of a claim.
func claimKey(claim jsonmap.Object) string {
	return jsonmap.String(claim, "metadata", "namespace") + "/" + jsonmap.String(claim, "metadata", "name")
}

// unsatisfied says why the volume a claim names cannot serve it; "" if it
// can.
func unsatisfied(pv, claim jsonmap.Object) string {
	size, requested := storageOf(pv, "spec", "capacity"), storageOf(claim, "spec", "resources", "requests")
	switch {
	case deleting(pv):
		return fmt.Sprintf("the volume is marked for deletion %q", jsonmap.String(pv, "metadata", "name"))
	case size.Cmp(requested) < 0:
		return "requested PV is too small"
	case volumeClass(pv) != claimClass(claim):
		return "storageClassName does not match"
	case jsonmap.String(pv, "spec", "volumeAttributesClassName") != jsonmap.String(claim, "spec", "volumeAttributesClassName"):
		return "volumeAttributesClassName does not match"
	case volumeModeOf(pv) != volumeModeOf(claim):
		return "incompatible volumeMode"
	case !hasAccessModes(claim, pv):
		return "incompatible accessMode"
	}
	return ""
}

func (b *volumeBinder) syncBoundClaim(ctx context.Context, claim jsonmap.Object) error {
	volumeName := jsonmap.String(claim, "spec", "volumeName")
	if volumeName == "" {
		return b.loseClaim(ctx, claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	pv, err := get(ctx, b.c, volumePath(volumeName))
	if err != nil {
		return err
	}
	switch {
	case pv == nil:
		return b.loseClaim(ctx, claim, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	case claimRef(pv) == nil || jsonmap.String(claimRef(pv), "uid") == jsonmap.String(claim, "metadata", "uid"):
		return b.bind(ctx, pv, claim)
	default:
		return b.loseClaim(ctx, claim, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")
	}
}

// loseClaim sets a claim's phase to Lost, with an event when it was not.
func (b *volumeBinder) loseClaim(ctx context.Context, claim jsonmap.Object, reason, message string) error {
	if jsonmap.String(claim, "status", "phase") == "Lost" {
		return nil
	}
	if err := b.putClaimStatus(ctx, claim, "Lost", nil); err != nil {
		return err
	}
	b.claimEvent(ctx, claim, "Warning", reason, message)
	return nil
}

// bind binds pv and claim to each other, in the controller's order: the
// volume's claimRef, its phase, the claim's volumeName and annotations,
// its status. A failed step is finished by the next look.
func (b *volumeBinder) bind(ctx context.Context, pv, claim jsonmap.Object) error {
	pv = copyMap(pv)
	if bindVolumeTo(pv, claim) {
		if err := b.c.Do(ctx, "PUT", volumePath(jsonmap.String(pv, "metadata", "name")), pv, &pv); err != nil {
			return err
		}
	}
	pv, err := b.putVolumePhase(ctx, pv, "Bound", "")
	if err != nil {
		return err
	}
	claim = copyMap(claim)
	dirty := false
	if name := jsonmap.String(pv, "metadata", "name"); jsonmap.String(claim, "spec", "volumeName") != name {
		jsonmap.Child(claim, "spec")["volumeName"] = name
		if !hasAnnotation(claim, annBoundByController) {
			setAnnotation(claim, annBoundByController, "yes")
		}
		dirty = true
	}
	if !hasAnnotation(claim, annBindCompleted) {
		setAnnotation(claim, annBindCompleted, "yes")
		dirty = true
	}
	if dirty {
		if err := b.c.Do(ctx, "PUT", objectPath("", "persistentvolumeclaims", claim), claim, &claim); err != nil {
			return err
		}
	}
	return b.putClaimStatus(ctx, claim, "Bound", pv)
}

// putClaimStatus sets a claim's phase, and the access modes and capacity
// of its volume (none without one).
func (b *volumeBinder) putClaimStatus(ctx context.Context, claim jsonmap.Object, phase string, pv jsonmap.Object) error {
	before := claim
	claim = copyMap(claim)
	status := jsonmap.Ensure(claim, "status")
	oldPhase := jsonmap.String(status, "phase")
	status["phase"] = phase
	if pv == nil {
		delete(status, "accessModes")
		delete(status, "capacity")
		delete(status, "currentVolumeAttributesClassName")
	} else {
		status["accessModes"] = jsonmap.Child(pv, "spec")["accessModes"]
		if oldPhase != phase {
			status["capacity"] = jsonmap.Child(pv, "spec")["capacity"]
			if vac := jsonmap.String(pv, "spec", "volumeAttributesClassName"); oldPhase == "Pending" && phase == "Bound" && vac != "" {
				status["currentVolumeAttributesClassName"] = vac
			}
		}
	}
	if jsonEqual(before["status"], claim["status"]) {
		return nil
	}
	return b.c.Do(ctx, "PUT", objectPath("", "persistentvolumeclaims", claim)+"/status", claim, nil)
}

// putVolumePhase sets a volume's phase and message; it returns the volume
// as stored.
func (b *volumeBinder) putVolumePhase(ctx context.Context, pv jsonmap.Object, phase, message string) (jsonmap.Object, error) {
	if jsonmap.String(pv, "status", "phase") == phase {
		return pv, nil
	}
	pv = copyMap(pv)
	status := jsonmap.Ensure(pv, "status")
	status["phase"] = phase
	if message == "" {
		delete(status, "message")
	} else {
		status["message"] = message
	}
	err := b.c.Do(ctx, "PUT", volumePath(jsonmap.String(pv, "metadata", "name"))+"/status", pv, &pv)
	return pv, err
}

func (b *volumeBinder) syncVolumeKey(ctx context.Context, name string) error {
	pv, err := get(ctx, b.c, volumePath(name))
	if err != nil || pv == nil {
		return err
	}
	ref := claimRef(pv)
	if ref == nil || jsonmap.String(ref, "uid") == "" {
		_, err := b.putVolumePhase(ctx, pv, "Available", "")
		return err
	}
	claim, err := get(ctx, b.c, claimPath(jsonmap.String(ref, "namespace"), jsonmap.String(ref, "name")))
	if err != nil {
		return err
	}
	if claim != nil && jsonmap.String(claim, "metadata", "uid") != jsonmap.String(ref, "uid") {
		claim = nil
	}
	switch {
	case claim == nil:
		return b.release(ctx, pv)
	case jsonmap.String(claim, "spec", "volumeName") == "":
		if volumeModeOf(pv) != volumeModeOf(claim) {
			b.volumeEvent(ctx, pv, "Warning", "VolumeMismatch", fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", jsonmap.String(claim, "metadata", "name")))
			b.claimEvent(ctx, claim, "Warning", "VolumeMismatch", fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", name))
			return nil
		}
		return b.syncClaim(ctx, claim)
	case jsonmap.String(claim, "spec", "volumeName") == name:
		_, err := b.putVolumePhase(ctx, pv, "Bound", "")
		return err
	case hasAnnotation(pv, annProvisionedBy) && jsonmap.String(pv, "spec", "persistentVolumeReclaimPolicy") == "Delete":
		return b.release(ctx, pv)
	default:
		return b.unbind(ctx, pv)
	}
}

// release marks a volume whose claim is gone Released and reclaims it by
// its policy: Retain keeps it; Delete deletes it, or leaves it to the
// external provisioner that made it; Recycle is left to a recycler pod,
// which does not run here.
func (b *volumeBinder) release(ctx context.Context, pv jsonmap.Object) error {
	if phase := jsonmap.String(pv, "status", "phase"); phase != "Released" && phase != "Failed" {
		var err error
		if pv, err = b.putVolumePhase(ctx, pv, "Released", ""); err != nil {
			return err
		}
	}
	switch jsonmap.String(pv, "spec", "persistentVolumeReclaimPolicy") {
	case "Retain", "Recycle":
		return nil
	case "Delete":
		return b.deleteVolume(ctx, pv)
	default:
		return b.failVolume(ctx, pv, "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy")
	}
}

// deleteVolume deletes a released volume of reclaim policy Delete with the
// in-tree plugin that can (host paths under /tmp, as the hostPath plugin);
// a volume an external provisioner made, or a CSI volume, is its
// provisioner's to delete.
func (b *volumeBinder) deleteVolume(ctx context.Context, pv jsonmap.Object) error {
	name := jsonmap.String(pv, "metadata", "name")
	if by := annotation(pv, annProvisionedBy); by != "" && !strings.HasPrefix(by, "kubernetes.io/") || jsonmap.Child(pv, "spec", "csi") != nil {
		return nil
	}
	if jsonmap.String(pv, "status", "phase") == "Failed" {
		return nil
	}
	spec := jsonmap.Child(pv, "spec")
	if hostPath := jsonmap.Child(spec, "hostPath"); hostPath != nil {
		path := jsonmap.String(hostPath, "path")
		if !strings.HasPrefix(path, "/tmp/") || len(path) == len("/tmp/") {
			return b.failVolume(ctx, pv, "VolumeFailedDelete", "host_path deleter only supports /tmp/.+ but received provided "+path)
		}
		err := b.c.Do(ctx, "DELETE", volumePath(name), nil, nil)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return b.failVolume(ctx, pv, "VolumeFailedDelete", fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", name))
}

func (b *volumeBinder) failVolume(ctx context.Context, pv jsonmap.Object, reason, message string) error {
	if jsonmap.String(pv, "status", "phase") == "Failed" {
		return nil
	}
	pv, err := b.putVolumePhase(ctx, pv, "Failed", message)
	if err != nil {
		return err
	}
	b.volumeEvent(ctx, pv, "Warning", reason, message)
	return nil
}

// unbind frees a volume whose claim is bound to another: the controller's
// own binding goes, a user's pre-binding keeps the claim's name.
func (b *volumeBinder) unbind(ctx context.Context, pv jsonmap.Object) error {
	pv = copyMap(pv)
	if hasAnnotation(pv, annBoundByController) {
		delete(jsonmap.Child(pv, "spec"), "claimRef")
		a := annotations(pv)
		delete(a, annBoundByController)
		if len(a) == 0 {
			delete(meta(pv), "annotations")
		}
	} else {
		delete(claimRef(pv), "uid")
	}
	if err := b.c.Do(ctx, "PUT", volumePath(jsonmap.String(pv, "metadata", "name")), pv, &pv); err != nil {
		return err
	}
	_, err := b.putVolumePhase(ctx, pv, "Available", "")
	return err
}

// bindForPod is kube-scheduler's part for a pod bound to a node: each
// unbound claim of a WaitForFirstConsumer class gets a volume the node can
// reach, bound to it, or the node selected for its provisioner.
func (b *volumeBinder) bindForPod(ctx context.Context, ns, name string) error {
	pod, err := get(ctx, b.c, namedPath("", "pods", ns, name))
	if err != nil || pod == nil || podTerminated(pod) {
		return err
	}
	node := jsonmap.String(pod, "spec", "nodeName")
	if node == "" {
		return nil
	}
	ctx = authn.WithUser(ctx, schedulerUser)
	var nodeLabels map[string]string
	for _, claimName := range podClaims(pod) {
		claim, err := get(ctx, b.scheduler, claimPath(ns, claimName))
		if err != nil {
			return err
		}
		if claim == nil || jsonmap.String(claim, "spec", "volumeName") != "" || hasAnnotation(claim, annSelectedNode) {
			continue
		}
		class, err := b.class(ctx, claimClass(claim))
		if err != nil {
			return err
		}
		if class == nil || !delaysBinding(class) {
			continue
		}
		if nodeLabels == nil {
			if nodeLabels, err = nodeLabelsOf(ctx, b.scheduler, node); err != nil {
				return err
			}
		}
		pvs, err := list(ctx, b.scheduler, "/api/v1/persistentvolumes")
		if err != nil {
			return err
		}
		if pv := findVolumeFor(claim, pvs, true, nodeLabels); pv != nil {
			pv = copyMap(pv)
			if bindVolumeTo(pv, claim) {
				if err := b.scheduler.Do(ctx, "PUT", volumePath(jsonmap.String(pv, "metadata", "name")), pv, nil); err != nil {
					return err
				}
			}
			continue
		}
		if jsonmap.String(class, "provisioner") == "kubernetes.io/no-provisioner" {
			continue
		}
		claim = copyMap(claim)
		setAnnotation(claim, annSelectedNode, node)
		if err := b.scheduler.Do(ctx, "PUT", claimPath(ns, claimName), claim, nil); err != nil {
			return err
		}
	}
	return nil
}
