package playground

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"kubeplay/server/authn"
)

// A controllerDef is one controller a sandbox can run: a controller of
// kube-controller-manager, or a simulated part of the cluster (nodes,
// kubelets, the scheduler) that stands in for what cannot run here. Each
// file that implements one declares it; controllerDefs lists them.
type controllerDef struct {
	// name switches it in Controllers.Off and in the playground API's
	// settings ("namespace", "garbageCollector", "serviceAccount"...).
	name string
	// title names it in logs and in the UI.
	title string
	// simulated marks a stand-in rather than kube-controller-manager's
	// controller: the root cluster runs these only when asked to
	// (serve --simulate-workloads), and the UI labels them simulated.
	simulated bool
	// serviceAccount is the kube-system ServiceAccount the controller acts
	// as, as kube-controller-manager's do with --use-service-account-credentials;
	// "" acts as simulatorUser.
	serviceAccount string
	// actsAs, if set, is who a component with a user of its own acts as:
	// kube-scheduler is system:kube-scheduler; the serviceaccount-token
	// controller, which kube-controller-manager runs with its own
	// credentials rather than a ServiceAccount's, system:kube-controller-manager.
	actsAs *authn.User
	// start makes the controller's reconciler for sb.
	start func(sb *Sandbox) reconciler
}

// controllerDefs are the controllers a sandbox can run, by name. Each def
// is declared beside its controller as static data and listed here, rather
// than registered by an init function in each file: a program's start then
// runs no code of theirs, spread over the package (each init touches a page
// of its own, resident from the first run on).
var controllerDefs = defsByName(
	clusterRoleAggregationDef, cronJobDef, csrApprovingDef, csrSigningDef, daemonSetDef,
	deploymentDef, disruptionDef, endpointsDef, endpointSliceDef, endpointSliceMirroringDef,
	garbageCollectorDef, horizontalPodAutoscalerDef, jobDef, kubeletDef, kubeadmDef, metricsDef,
	namespaceDef, nodeLifecycleDef, nodesDef, podGCDef, provisionerDef, replicaSetDef, replicationControllerDef,
	resourceQuotaDef, rootCACertPublisherDef, schedulerDef, serviceAccountDef, serviceAccountTokenDef,
	statefulSetDef, taintEvictionDef, ttlAfterFinishedDef, validatingAdmissionPolicyStatusDef,
	persistentVolumeBinderDef, pvcProtectionDef, pvProtectionDef, vacProtectionDef,
)

func defsByName(defs ...controllerDef) map[string]controllerDef {
	m := make(map[string]controllerDef, len(defs))
	for _, d := range defs {
		if _, dup := m[d.name]; dup {
			panic("playground: controller " + d.name + " listed twice")
		}
		m[d.name] = d
	}
	return m
}

// user is who the controller's requests are made as.
func (d controllerDef) user() *authn.User {
	if d.actsAs != nil {
		return d.actsAs
	}
	if d.serviceAccount == "" {
		return simulatorUser
	}
	return controllerUser(d.serviceAccount)
}

// ControllerNames lists the controllers a sandbox can run, sorted.
func ControllerNames() []string { return slices.Sorted(maps.Keys(controllerDefs)) }

// basicControllers are the controllers a bare control plane runs unless
// told otherwise (the root cluster of serve, a test environment): those
// that keep the API's own objects as a cluster has them and whose absence
// people work around (namespaces that never finish deleting, no cascading
// deletion). The rest, the ServiceAccount controllers included, make a
// cluster of the control plane and run only when asked for: a bare control
// plane answers as kube-apiserver alone does (no kube-root-ca.crt, no
// default ServiceAccount, so no pod is admitted without one), which the
// tests compare it with.
var basicControllers = []string{"namespace", "garbageCollector", "clusterRoleAggregation", "validatingAdmissionPolicyStatus"}

// BasicControllers returns Controllers running the basic controllers (if
// basics) and the others (if workloads).
func BasicControllers(basics, workloads bool) Controllers {
	var off []string
	for _, name := range ControllerNames() {
		if basic := slices.Contains(basicControllers, name); basic && !basics || !basic && !workloads {
			off = append(off, name)
		}
	}
	return Controllers{}.Without(off...)
}

// IsSimulated reports whether the controller name is a simulated stand-in.
func IsSimulated(name string) bool { return controllerDefs[name].simulated }

// controllerAgent is the user agent kube-controller-manager's controller
// sends when it acts as the ServiceAccount serviceAccount.
func controllerAgent(serviceAccount string) string {
	return "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:" + serviceAccount
}

// rootAgent is the user agent of kube-controller-manager's client named
// name that acts with its own credentials.
func rootAgent(name string) string {
	return "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/" + name
}

// Controllers says which controllers a sandbox runs: all but those switched
// off.
type Controllers struct {
	// Off names the controllers switched off (see ControllerNames), to show
	// what the API server alone does (objects stay Terminating).
	Off map[string]bool
	// FinalizerBots are simulated actors that remove a finalizer some time
	// after an object's deletion was requested.
	FinalizerBots []FinalizerBot
	// Nodes is how many nodes the simulated cluster has (0: defaultNodes);
	// the nodes controller registers them and their kubelets run their pods.
	Nodes int
}

// Running reports whether the controller name runs.
func (c Controllers) Running(name string) bool { return !c.Off[name] }

// Without returns c with the controllers names switched off too.
func (c Controllers) Without(names ...string) Controllers {
	off := maps.Clone(c.Off)
	if off == nil {
		off = map[string]bool{}
	}
	for _, name := range names {
		off[name] = true
	}
	c.Off = off
	return c
}

// ControllerSwitches switch a sandbox's controllers on (true) or off
// (false), by name; a controller not named stays as it is. It is how the
// playground API and scenarios spell Controllers.
type ControllerSwitches map[string]bool

// SwitchesOf says of every controller whether c runs it.
func SwitchesOf(c Controllers) ControllerSwitches {
	s := ControllerSwitches{}
	for name := range controllerDefs {
		s[name] = c.Running(name)
	}
	return s
}

// Apply switches the controllers s names, leaving the others as c has them.
func (s ControllerSwitches) Apply(c Controllers) (Controllers, error) {
	var unknown []string
	off := maps.Clone(c.Off)
	if off == nil {
		off = map[string]bool{}
	}
	for name, on := range s {
		if _, ok := controllerDefs[name]; !ok {
			unknown = append(unknown, name)
			continue
		}
		if on {
			delete(off, name)
		} else {
			off[name] = true
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, fmt.Errorf("controllers: unknown %s (known: %s)", strings.Join(unknown, ", "), strings.Join(ControllerNames(), ", "))
	}
	c.Off = off
	return c, nil
}
