package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// kube-system as a kind cluster has it. kind builds its cluster with
// kubeadm, which writes the control plane's static pods on the control
// plane's node (their kubelet publishes them as mirror pods: the nodes
// controller does here) and, once, installs its add-ons through the API:
// kube-proxy (a DaemonSet) and CoreDNS (a Deployment of 2 and the kube-dns
// Service at 10.96.0.10); kind adds its CNI, kindnet (a DaemonSet). The
// add-ons are made as kubeadm makes them, so the simulated controllers
// make their pods, the scheduler places them and the kubelets run them.
//
// They are in every sandbox whose simulated cluster runs, as in the root
// cluster run with --simulate-workloads: a learner's `kubectl get pods -A`
// shows what kind's does, and the conformance suite finds kube-proxy on
// every node. They cost some 40 objects of a sandbox's 10,000, and their
// pods' events. Switched off before a sandbox first starts (kubeadm), it
// has no add-ons; the mirror pods are the control plane's kubelet's.

// kubeadmAgent and kubeadmUser are who kubeadm init acts as: the
// super-admin credentials it bootstraps the cluster with.
const kubeadmAgent = "kubeadm/v1.35.4 (linux/amd64) kubernetes/7b8c6cf"

var kubeadmUser = &authn.User{Name: "kubernetes-super-admin", Groups: []string{authn.Masters, authn.Authenticated}}

var kubeadmDef = controllerDef{name: "kubeadm", title: "kubeadm add-ons", simulated: true, actsAs: kubeadmUser,
	start: func(sb *Sandbox) reconciler { return &kubeadmAddons{api: inproc.New(sb.handler, kubeadmAgent)} }}

// kubeadmAddons installs the add-ons once: the kubeadm-config ConfigMap,
// made last, says they were. Its one key is addonsKey.
type kubeadmAddons struct{ api *inproc.Client }

const addonsKey = "addons"

var _ reconciler = (*kubeadmAddons)(nil)

func (k *kubeadmAddons) resync(context.Context, int64) ([]string, error) {
	return []string{addonsKey}, nil
}

func (k *kubeadmAddons) keysOf(store.Event, queue) {}

func (k *kubeadmAddons) reconcile(ctx context.Context, _ string) (time.Duration, error) {
	done, err := get(ctx, k.api, namedPath("", "configmaps", "kube-system", "kubeadm-config"))
	if err != nil || done != nil {
		return 0, err
	}
	for _, doc := range strings.Split(kubeadmAddonManifests, "\n---\n") {
		var o jsonmap.Object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return 0, err
		}
		// What an earlier, interrupted run made is kept, as kubeadm
		// does: created again, a Service would not get its cluster IP.
		collection := collectionOf(o)
		existing, err := get(ctx, k.api, collection+"/"+jsonmap.String(o, "metadata", "name"))
		if err != nil {
			return 0, err
		}
		if existing != nil {
			continue
		}
		if err := k.api.Do(ctx, "POST", collection, o, nil); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("%s %s: %w", o["kind"], jsonmap.String(o, "metadata", "name"), err)
		}
	}
	return 0, nil
}

// collectionOf is the URL of the collection o is created in.
func collectionOf(o jsonmap.Object) string {
	apiVersion, _ := o["apiVersion"].(string)
	resource := strings.ToLower(o["kind"].(string)) + "s"
	prefix := "/apis/" + apiVersion
	if apiVersion == "v1" {
		prefix = "/api/v1"
	}
	if ns := jsonmap.String(o, "metadata", "namespace"); ns != "" {
		return prefix + "/namespaces/" + ns + "/" + resource
	}
	return prefix + "/" + resource
}

// kubeadmAddonManifests are the add-ons in the order kubeadm (then kind)
// creates them, kubeadm-config last.
const kubeadmAddonManifests = `apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health {
           lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
           ttl 30
        }
        prometheus :9153
        forward . /etc/resolv.conf {
           max_concurrent 1000
        }
        cache 30 {
           disable success cluster.local
           disable denial cluster.local
        }
        loop
        reload
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector: {matchExpressions: [{key: k8s-app, operator: In, values: [kube-dns]}]}
              topologyKey: kubernetes.io/hostname
      tolerations:
      - {key: CriticalAddonsOnly, operator: Exists}
      - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
      nodeSelector: {kubernetes.io/os: linux}
      containers:
      - name: coredns
        image: registry.k8s.io/coredns/coredns:v1.13.1
        imagePullPolicy: IfNotPresent
        resources:
          limits: {memory: 170Mi}
          requests: {cpu: 100m, memory: 70Mi}
        args: [-conf, /etc/coredns/Corefile]
        volumeMounts: [{name: config-volume, mountPath: /etc/coredns, readOnly: true}]
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        - {containerPort: 9153, name: metrics, protocol: TCP}
        - {containerPort: 8080, name: liveness-probe, protocol: TCP}
        - {containerPort: 8181, name: readiness-probe, protocol: TCP}
        livenessProbe:
          httpGet: {path: /health, port: liveness-probe, scheme: HTTP}
          initialDelaySeconds: 60
          timeoutSeconds: 5
          successThreshold: 1
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: readiness-probe, scheme: HTTP}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
          readOnlyRootFilesystem: true
      dnsPolicy: Default
      volumes:
      - name: config-volume
        configMap: {name: coredns, items: [{key: Corefile, path: Corefile}]}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/cluster-service: "true", kubernetes.io/name: CoreDNS}
  annotations: {prometheus.io/port: "9153", prometheus.io/scrape: "true"}
spec:
  clusterIP: 10.96.0.10
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
  - {name: metrics, port: 9153, protocol: TCP, targetPort: 9153}
  selector: {k8s-app: kube-dns}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-proxy, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-proxier"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-proxier"}
subjects: [{kind: ServiceAccount, name: kube-proxy, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-proxy
  namespace: kube-system
  labels: {app: kube-proxy}
data:
  config.conf: |-
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    bindAddress: 0.0.0.0
    clientConnection:
      kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
    clusterCIDR: 10.244.0.0/16
    conntrack:
      maxPerCore: 0
    iptables:
      minSyncPeriod: 1s
    mode: iptables
  kubeconfig.conf: |-
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
        server: https://kubeplay-control-plane:6443
      name: default
    contexts:
    - context:
        cluster: default
        namespace: default
        user: default
      name: default
    current-context: default
    users:
    - name: default
      user:
        tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-proxy
  namespace: kube-system
  labels: {k8s-app: kube-proxy}
spec:
  selector: {matchLabels: {k8s-app: kube-proxy}}
  updateStrategy: {type: RollingUpdate}
  template:
    metadata: {labels: {k8s-app: kube-proxy}}
    spec:
      priorityClassName: system-node-critical
      containers:
      - name: kube-proxy
        image: registry.k8s.io/kube-proxy:v1.35.4
        imagePullPolicy: IfNotPresent
        command: [/usr/local/bin/kube-proxy, --config=/var/lib/kube-proxy/config.conf, --hostname-override=$(NODE_NAME)]
        securityContext: {privileged: true}
        volumeMounts:
        - {mountPath: /var/lib/kube-proxy, name: kube-proxy}
        - {mountPath: /run/xtables.lock, name: xtables-lock, readOnly: false}
        - {mountPath: /lib/modules, name: lib-modules, readOnly: true}
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
      hostNetwork: true
      serviceAccountName: kube-proxy
      volumes:
      - {name: kube-proxy, configMap: {name: kube-proxy}}
      - {name: xtables-lock, hostPath: {path: /run/xtables.lock, type: FileOrCreate}}
      - {name: lib-modules, hostPath: {path: /lib/modules}}
      tolerations: [{operator: Exists}]
      nodeSelector: {kubernetes.io/os: linux}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kindnet}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [list, watch, patch]}
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
- {apiGroups: [""], resources: [pods, namespaces], verbs: [list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kindnet}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kindnet}
subjects: [{kind: ServiceAccount, name: kindnet, namespace: kube-system}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: kindnet, namespace: kube-system}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kindnet
  namespace: kube-system
  labels: {tier: node, app: kindnet, k8s-app: kindnet}
spec:
  selector: {matchLabels: {app: kindnet}}
  template:
    metadata: {labels: {tier: node, app: kindnet, k8s-app: kindnet}}
    spec:
      hostNetwork: true
      tolerations: [{operator: Exists}]
      serviceAccountName: kindnet
      containers:
      - name: kindnet-cni
        image: docker.io/kindest/kindnetd:v20250512-df8de77b
        env:
        - name: HOST_IP
          valueFrom: {fieldRef: {fieldPath: status.hostIP}}
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        - {name: POD_SUBNET, value: 10.244.0.0/16}
        - {name: CONTROL_PLANE_ENDPOINT, value: "kubeplay-control-plane:6443"}
        volumeMounts:
        - {name: cni-cfg, mountPath: /etc/cni/net.d}
        - {name: xtables-lock, mountPath: /run/xtables.lock, readOnly: false}
        - {name: lib-modules, mountPath: /lib/modules, readOnly: true}
        resources:
          requests: {cpu: 100m, memory: 50Mi}
          limits: {cpu: 100m, memory: 50Mi}
        securityContext:
          privileged: false
          capabilities: {add: [NET_RAW, NET_ADMIN]}
      volumes:
      - {name: cni-cfg, hostPath: {path: /etc/cni/net.d, type: DirectoryOrCreate}}
      - {name: xtables-lock, hostPath: {path: /run/xtables.lock, type: FileOrCreate}}
      - {name: lib-modules, hostPath: {path: /lib/modules}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubeadm-config, namespace: kube-system}
data:
  ClusterConfiguration: |
    apiServer: {}
    apiVersion: kubeadm.k8s.io/v1beta4
    clusterName: kubeplay
    controlPlaneEndpoint: kubeplay-control-plane:6443
    controllerManager: {}
    dns: {}
    etcd:
      local:
        dataDir: /var/lib/etcd
    imageRepository: registry.k8s.io
    kind: ClusterConfiguration
    kubernetesVersion: v1.35.4
    networking:
      dnsDomain: cluster.local
      podSubnet: 10.244.0.0/16
      serviceSubnet: 10.96.0.0/16
    scheduler: {}`

// staticPod is one of the control plane's components that kubeadm writes
// as a static pod manifest: its name, the annotation kubeadm gives it, its
// image, command and cpu request, and the host paths it mounts.
type staticPod struct {
	component, image string
	annotation       [2]string
	command          []string
	cpu, memory      string
	hostPaths        [][2]string // name, path
}

var staticPods = []staticPod{
	{component: "etcd", image: "registry.k8s.io/etcd:3.6.6-0",
		annotation: [2]string{"kubeadm.kubernetes.io/etcd.advertise-client-urls", "https://172.18.0.2:2379"},
		command: []string{"etcd", "--advertise-client-urls=https://172.18.0.2:2379", "--cert-file=/etc/kubernetes/pki/etcd/server.crt",
			"--client-cert-auth=true", "--data-dir=/var/lib/etcd", "--listen-client-urls=https://127.0.0.1:2379,https://172.18.0.2:2379",
			"--name=" + controlPlaneNode, "--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt"},
		cpu: "100m", memory: "100Mi",
		hostPaths: [][2]string{{"etcd-certs", "/etc/kubernetes/pki/etcd"}, {"etcd-data", "/var/lib/etcd"}}},
	{component: "kube-apiserver", image: "registry.k8s.io/kube-apiserver:v1.35.4",
		annotation: [2]string{"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint", "172.18.0.2:6443"},
		command: []string{"kube-apiserver", "--advertise-address=172.18.0.2", "--authorization-mode=Node,RBAC",
			"--client-ca-file=/etc/kubernetes/pki/ca.crt", "--enable-admission-plugins=NodeRestriction", "--etcd-servers=https://127.0.0.1:2379",
			"--secure-port=6443", "--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-cluster-ip-range=10.96.0.0/16"},
		cpu:       "250m",
		hostPaths: [][2]string{{"ca-certs", "/etc/ssl/certs"}, {"k8s-certs", "/etc/kubernetes/pki"}}},
	{component: "kube-controller-manager", image: "registry.k8s.io/kube-controller-manager:v1.35.4",
		command: []string{"kube-controller-manager", "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16", "--cluster-name=kubeplay",
			"--controllers=*,bootstrapsigner,tokencleaner", "--kubeconfig=/etc/kubernetes/controller-manager.conf", "--leader-elect=true",
			"--service-cluster-ip-range=10.96.0.0/16", "--use-service-account-credentials=true"},
		cpu:       "200m",
		hostPaths: [][2]string{{"ca-certs", "/etc/ssl/certs"}, {"k8s-certs", "/etc/kubernetes/pki"}, {"kubeconfig", "/etc/kubernetes/controller-manager.conf"}}},
	{component: "kube-scheduler", image: "registry.k8s.io/kube-scheduler:v1.35.4",
		command:   []string{"kube-scheduler", "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf", "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"},
		cpu:       "100m",
		hostPaths: [][2]string{{"kubeconfig", "/etc/kubernetes/scheduler.conf"}}},
}

// mirrorPodName is the name of the mirror pod of a static pod on node.
func mirrorPodName(component, node string) string { return component + "-" + node }

// mirrorPod is the mirror pod the kubelet of node (a Node object) creates
// for the static pod sp, first seen at seen: the manifest's pod, owned by
// the node, annotated with the manifest's hash and where it came from.
func (sp staticPod) mirrorPod(node jsonmap.Object, seen time.Time) jsonmap.Object {
	nodeName := jsonmap.String(node, "metadata", "name")
	requests := map[string]any{"cpu": sp.cpu}
	if sp.memory != "" {
		requests["memory"] = sp.memory
	}
	var volumes, mounts []any
	for _, hp := range sp.hostPaths {
		volumes = append(volumes, map[string]any{"name": hp[0], "hostPath": map[string]any{"path": hp[1], "type": "DirectoryOrCreate"}})
		mounts = append(mounts, map[string]any{"name": hp[0], "mountPath": hp[1]})
	}
	command := make([]any, len(sp.command))
	for i, c := range sp.command {
		command[i] = c
	}
	spec := map[string]any{
		"containers": []any{map[string]any{"name": sp.component, "image": sp.image, "imagePullPolicy": "IfNotPresent",
			"command": command, "resources": map[string]any{"requests": requests}, "volumeMounts": mounts}},
		"hostNetwork": true, "nodeName": nodeName, "priorityClassName": "system-node-critical",
		"securityContext": map[string]any{"seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"tolerations":     []any{map[string]any{"operator": "Exists", "effect": "NoExecute"}},
		"volumes":         volumes,
	}
	b, _ := json.Marshal(spec)
	h := fnv.New128a()
	h.Write(b)
	hash := fmt.Sprintf("%x", h.Sum(nil))
	annotations := map[string]any{"kubernetes.io/config.hash": hash, "kubernetes.io/config.mirror": hash,
		"kubernetes.io/config.seen": seen.UTC().Format(time.RFC3339Nano), "kubernetes.io/config.source": "file"}
	if sp.annotation[0] != "" {
		annotations[sp.annotation[0]] = sp.annotation[1]
	}
	return jsonmap.Object{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": mirrorPodName(sp.component, nodeName), "namespace": "kube-system",
			"labels":          map[string]any{"component": sp.component, "tier": "control-plane"},
			"annotations":     annotations,
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Node", "name": nodeName, "uid": jsonmap.String(node, "metadata", "uid"), "controller": true}}},
		"spec": spec}
}

// isMirrorPodKey reports whether a pod's store key (after podKeyPrefix) is
// that of one of the control plane's mirror pods.
func isMirrorPodKey(key string) bool {
	for _, sp := range staticPods {
		if key == "kube-system/"+mirrorPodName(sp.component, controlPlaneNode) {
			return true
		}
	}
	return false
}

// publishStaticPods creates the mirror pods of the control plane's node
// that are missing, as its kubelet does when it starts and whenever one is
// deleted.
func (n *nodes) publishStaticPods(ctx context.Context, node jsonmap.Object) error {
	for _, sp := range staticPods {
		pod := sp.mirrorPod(node, n.now())
		path := namedPath("", "pods", "kube-system", jsonmap.String(pod, "metadata", "name"))
		existing, err := get(ctx, n.api, path)
		if err != nil {
			return err
		}
		if existing != nil {
			continue
		}
		if err := n.api.Do(ctx, "POST", workloadCollection("", "pods", "kube-system"), pod, nil); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
