package defaults

import (
	"maps"

	"kubeplay/internal/jsonmap"
)

func deployment(spec Object) {
	set(spec, "replicas", num(1))
	strategy := setObject(spec, "strategy")
	set(strategy, "type", "RollingUpdate")
	if strategy != nil && strategy["type"] == "RollingUpdate" {
		ru := setObject(strategy, "rollingUpdate")
		setPointer(ru, "maxUnavailable", "25%")
		setPointer(ru, "maxSurge", "25%")
	}
	set(spec, "revisionHistoryLimit", num(10))
	set(spec, "progressDeadlineSeconds", num(600))
	podTemplate(jsonmap.Child(spec, "template"))
}

func statefulSet(spec Object) {
	set(spec, "replicas", num(1))
	set(spec, "podManagementPolicy", "OrderedReady")
	strategy := setObject(spec, "updateStrategy")
	set(strategy, "type", "RollingUpdate")
	if strategy != nil && strategy["type"] == "RollingUpdate" {
		set(setObject(strategy, "rollingUpdate"), "partition", num(0))
	}
	set(spec, "revisionHistoryLimit", num(10))
	retention := setObject(spec, "persistentVolumeClaimRetentionPolicy")
	set(retention, "whenDeleted", "Retain")
	set(retention, "whenScaled", "Retain")
	for _, pvc := range jsonmap.Items(spec["volumeClaimTemplates"]) {
		set(pvc, "apiVersion", "v1")
		set(pvc, "kind", "PersistentVolumeClaim")
		set(setObject(pvc, "spec"), "volumeMode", "Filesystem")
		set(setObject(pvc, "status"), "phase", "Pending")
	}
	podTemplate(jsonmap.Child(spec, "template"))
}

// templateGeneration is the annotation in which a DaemonSet keeps the
// generation of its pod template. A DaemonSet decoded without it holds
// generation 0 there, which its writer then owns (its storage sets the
// real generation later: see PrepareForCreate and PrepareForUpdate).
const templateGeneration = "deprecated.daemonset.template.generation"

func daemonSet(md, spec Object) {
	if md != nil {
		set(setObject(md, "annotations"), templateGeneration, "0")
	}
	strategy := setObject(spec, "updateStrategy")
	set(strategy, "type", "RollingUpdate")
	if strategy != nil && strategy["type"] == "RollingUpdate" {
		ru := setObject(strategy, "rollingUpdate")
		setPointer(ru, "maxUnavailable", num(1))
		setPointer(ru, "maxSurge", num(0))
	}
	set(spec, "revisionHistoryLimit", num(10))
	podTemplate(jsonmap.Child(spec, "template"))
}

// replicationController defaults an RC, whose selector and labels are
// its template's when it names none.
func replicationController(obj, spec Object) {
	template := jsonmap.Child(spec, "template")
	labels := jsonmap.Child(jsonmap.Child(template, "metadata"), "labels")
	if len(labels) > 0 {
		if len(jsonmap.Child(spec, "selector")) == 0 {
			spec["selector"] = maps.Clone(labels)
		}
		if md := jsonmap.Child(obj, "metadata"); len(jsonmap.Child(md, "labels")) == 0 {
			md["labels"] = maps.Clone(labels)
		}
	}
	set(spec, "replicas", num(1))
	podTemplate(template)
}

// job defaults a Job. Its labels are its template's when it has none (the
// generated selector's labels come later, in PrepareForCreate).
func job(obj, spec Object) {
	JobLabels(obj)
	if spec == nil {
		return
	}
	if unset(spec, "completions") && unset(spec, "parallelism") {
		spec["completions"] = num(1)
	}
	set(spec, "parallelism", num(1))
	set(spec, "backoffLimit", num(6))
	set(spec, "completionMode", "NonIndexed")
	set(spec, "suspend", false)
	set(spec, "manualSelector", false)
	if unset(spec, "podFailurePolicy") {
		set(spec, "podReplacementPolicy", "TerminatingOrFailed")
	} else {
		set(spec, "podReplacementPolicy", "Failed")
	}
	podTemplate(jsonmap.Child(spec, "template"))
}

// JobLabels gives a Job without labels its pod template's. kube-apiserver's
// defaults do it each time they decode a Job: from a request, and from
// storage, where a new Job is stored without the labels PrepareForCreate
// gave its template, so that its validation does not see them.
func JobLabels(obj Object) {
	labels := jsonmap.Child(jsonmap.Child(jsonmap.Child(jsonmap.Child(obj, "spec"), "template"), "metadata"), "labels")
	if md := jsonmap.Child(obj, "metadata"); md != nil && len(labels) > 0 && len(jsonmap.Child(md, "labels")) == 0 {
		md["labels"] = maps.Clone(labels)
	}
}

func cronJob(spec Object) {
	set(spec, "concurrencyPolicy", "Allow")
	set(spec, "suspend", false)
	set(spec, "successfulJobsHistoryLimit", num(3))
	set(spec, "failedJobsHistoryLimit", num(1))
	podTemplate(jsonmap.Child(jsonmap.Child(jsonmap.Child(spec, "jobTemplate"), "spec"), "template"))
}
