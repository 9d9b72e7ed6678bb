package playground

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// localPathProvisioner stands in for the local-path provisioner of a kind
// cluster (simulated: no directory is made on any node). It makes a
// hostPath volume on the selected node for each claim the
// persistentvolume-binder hands it (a claim of its class annotated with
// its name), and deletes a volume it made, of reclaim policy Delete, once
// its claim is gone. Its keys: "claim/<namespace>/<name>" and
// "volume/<name>".
type localPathProvisioner struct {
	c      *inproc.Client
	events *eventRecorder
}

const (
	localPathProvisionerName = "rancher.io/local-path"
	localPathAgent           = "local-path-provisioner/v0.0.31 (linux/amd64) kubernetes/$Format"
	// localPathIdentity is the provisioner's identity in its events, as
	// the provisioner library composes it (name, pod, instance).
	localPathIdentity = "rancher.io/local-path_local-path-provisioner-simulated"
	localPathRoot     = "/var/local-path-provisioner"
	annLocalPathNode  = "local.path.provisioner/selected-node"
)

var provisionerDef = controllerDef{name: "provisioner", title: "local-path provisioner", simulated: true,
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, localPathAgent)
		return &localPathProvisioner{c: c, events: newEventRecorder(c, localPathIdentity, "", sb.clock.Now)}
	}}

// defaultStorageClass is the StorageClass a kind cluster starts with, its
// volumes made by the simulated provisioner.
func defaultStorageClass() jsonmap.Object {
	return jsonmap.Object{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
		"metadata": jsonmap.Object{"name": "standard", "annotations": jsonmap.Object{
			annDefaultClass:             "true",
			"kubeplay.dev/simulated":    "true",
			"kubernetes.io/description": "The default class of a kind cluster. Its volumes are made by kubeplay's simulated local-path provisioner: host paths on the selected node, which store nothing.",
		}},
		"provisioner": localPathProvisionerName, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"}
}

// createDefaultStorageClass creates the default StorageClass in a new
// cluster, as kind's node image installs it.
func createDefaultStorageClass(ctx context.Context, c *inproc.Client) error {
	err := c.Do(ctx, "POST", allPath(storageClassesV1), defaultStorageClass(), nil)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (p *localPathProvisioner) resync(ctx context.Context, _ int64) ([]string, error) {
	claims, err := list(ctx, p.c, "/api/v1/persistentvolumeclaims")
	if err != nil {
		return nil, err
	}
	pvs, err := list(ctx, p.c, "/api/v1/persistentvolumes")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, claim := range claims {
		if wantsLocalPath(claim) {
			keys = append(keys, "claim/"+claimKey(claim))
		}
	}
	for _, pv := range pvs {
		if annotation(pv, annProvisionedBy) == localPathProvisionerName && jsonmap.String(pv, "status", "phase") == "Released" {
			keys = append(keys, "volume/"+jsonmap.String(pv, "metadata", "name"))
		}
	}
	return keys, nil
}

// wantsLocalPath reports whether the binder asked this provisioner for
// the claim's volume and it has none yet.
func wantsLocalPath(claim jsonmap.Object) bool {
	return jsonmap.String(claim, "spec", "volumeName") == "" && !deleting(claim) &&
		(annotation(claim, annStorageProvisioner) == localPathProvisionerName || annotation(claim, annBetaStorageProvisioner) == localPathProvisionerName)
}

func (p *localPathProvisioner) keysOf(ev store.Event, q queue) {
	if ev.Type == store.Deleted || !bytes.Contains(ev.KV.Value, []byte(localPathProvisionerName)) {
		return
	}
	if name, ok := strings.CutPrefix(ev.KV.Key, claimKeyPrefix); ok {
		q.Add("claim/" + name)
	} else if name, ok := strings.CutPrefix(ev.KV.Key, volumeKeyPrefix); ok {
		q.Add("volume/" + name)
	}
}

func (p *localPathProvisioner) reconcile(ctx context.Context, key string) (time.Duration, error) {
	kind, rest, _ := strings.Cut(key, "/")
	switch kind {
	case "claim":
		ns, name, _ := strings.Cut(rest, "/")
		return 0, p.provision(ctx, ns, name)
	case "volume":
		return 0, p.deleteReleased(ctx, rest)
	}
	return 0, nil
}

// provision makes the volume of a claim handed to this provisioner.
func (p *localPathProvisioner) provision(ctx context.Context, ns, name string) error {
	claim, err := get(ctx, p.c, claimPath(ns, name))
	if err != nil || claim == nil || !wantsLocalPath(claim) {
		return err
	}
	className := claimClass(claim)
	class, err := get(ctx, p.c, classPath(className))
	if err != nil || class == nil || jsonmap.String(class, "provisioner") != localPathProvisionerName {
		return err
	}
	node := annotation(claim, annSelectedNode)
	if delaysBinding(class) && node == "" {
		return nil // the scheduler has not chosen a node yet
	}
	pvName := "pvc-" + jsonmap.String(claim, "metadata", "uid")
	existing, err := get(ctx, p.c, volumePath(pvName))
	if err != nil || existing != nil {
		return err
	}
	ref := refTo(claim, "v1", "PersistentVolumeClaim")
	p.events.event(ctx, ref, "Normal", "Provisioning", fmt.Sprintf("External provisioner is provisioning volume for claim %q", ns+"/"+name))
	if node == "" {
		msg := fmt.Sprintf("failed to provision volume with StorageClass %q: configuration error, no node was specified", className)
		p.events.event(ctx, ref, "Warning", "ProvisioningFailed", msg)
		return nil
	}
	reclaim := jsonmap.String(class, "reclaimPolicy")
	if reclaim == "" {
		reclaim = "Delete"
	}
	pv := jsonmap.Object{"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": jsonmap.Object{"name": pvName, "annotations": jsonmap.Object{
			annProvisionedBy: localPathProvisionerName, annLocalPathNode: node}},
		"spec": jsonmap.Object{
			"accessModes":                   jsonmap.Child(claim, "spec")["accessModes"],
			"capacity":                      jsonmap.Object{"storage": jsonmap.String(claim, "spec", "resources", "requests", "storage")},
			"claimRef":                      referenceTo(claim),
			"hostPath":                      jsonmap.Object{"path": fmt.Sprintf("%s/%s_%s_%s", localPathRoot, pvName, ns, name), "type": "DirectoryOrCreate"},
			"persistentVolumeReclaimPolicy": reclaim,
			"storageClassName":              className,
			"volumeMode":                    volumeModeOf(claim),
			"nodeAffinity": jsonmap.Object{"required": jsonmap.Object{"nodeSelectorTerms": []any{jsonmap.Object{"matchExpressions": []any{
				jsonmap.Object{"key": "kubernetes.io/hostname", "operator": "In", "values": []any{node}}}}}}},
		}}
	if err := p.c.Do(ctx, "POST", "/api/v1/persistentvolumes", pv, nil); err != nil && !apierrors.IsAlreadyExists(err) {
		p.events.event(ctx, ref, "Warning", "ProvisioningFailed", fmt.Sprintf("failed to provision volume with StorageClass %q: %v", className, err))
		return err
	}
	p.events.event(ctx, ref, "Normal", "ProvisioningSucceeded", fmt.Sprintf("Successfully provisioned volume %s", pvName))
	return nil
}

// deleteReleased deletes a volume this provisioner made whose claim is
// gone, if its reclaim policy is Delete (the binder marks it Released).
func (p *localPathProvisioner) deleteReleased(ctx context.Context, name string) error {
	pv, err := get(ctx, p.c, volumePath(name))
	if err != nil || pv == nil || deleting(pv) {
		return err
	}
	if annotation(pv, annProvisionedBy) != localPathProvisionerName || jsonmap.String(pv, "status", "phase") != "Released" ||
		jsonmap.String(pv, "spec", "persistentVolumeReclaimPolicy") != "Delete" {
		return nil
	}
	err = p.c.Do(ctx, "DELETE", volumePath(name), nil, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
