package validation

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Job checks a new Job: a selector the server generated (unless the Job
// chose its own), and its spec.
func Job(obj Object) field.ErrorList { return job(obj, true) }

// job checks a Job; prefixedLabels: its pod template must carry the
// batch.kubernetes.io/ labels too, not only the legacy ones.
func job(obj Object, prefixedLabels bool) field.ErrorList {
	return append(generatedSelector(obj, prefixedLabels), jobSpecWithSelector(jsonmap.Child(obj, "spec"))...)
}

// JobUpdate checks a Job's update as kube-apiserver does: the Job as new,
// its spec once more, then what may not change (its completions unless
// indexed, selector, pod template, completion mode and policies).
func JobUpdate(obj, old Object) field.ErrorList {
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	// The selector generated for it names the stored Job's uid.
	md := deepCopy(obj)
	jsonmap.Child(md, "metadata")["uid"] = jsonmap.Child(old, "metadata")["uid"]
	// Jobs created before the batch.kubernetes.io/ labels need not get them.
	oldLabels := jsonmap.Child(jsonmap.Child(jsonmap.Child(oldSpec, "template"), "metadata"), "labels")
	_, hadName := oldLabels[batchPrefix+jobNameLabel]
	_, hadUID := oldLabels[batchPrefix+controllerUIDLabel]
	errs := append(job(md, hadName && hadUID), jobSpecWithSelector(spec)...)
	if spec["completionMode"] != "Indexed" {
		errs = append(errs, immutableField(spec, oldSpec, "completions")...)
	}
	ls, _ := labelSelectorOf(spec["selector"])
	if was, _ := labelSelectorOf(oldSpec["selector"]); !reflect.DeepEqual(ls, was) {
		errs = append(errs, field.Invalid(selectorPath, ls, "field is immutable"))
	}
	template := internalJSON("core.PodTemplateSpec", jsonmap.Child(spec, "template"))
	if !bytes.Equal(template, internalJSON("core.PodTemplateSpec", jsonmap.Child(oldSpec, "template"))) {
		errs = append(errs, field.Invalid(templatePath, template, "field is immutable"))
	}
	for _, f := range []string{"completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"} {
		errs = append(errs, immutableField(spec, oldSpec, f)...)
	}
	return errs
}

// immutableField checks that spec's field f is oldSpec's.
func immutableField(spec, oldSpec Object, f string) field.ErrorList {
	if reflect.DeepEqual(spec[f], oldSpec[f]) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath.Child(f), spec[f], "field is immutable")}
}

const (
	batchPrefix        = "batch.kubernetes.io/"
	jobNameLabel       = "job-name"
	controllerUIDLabel = "controller-uid"
)

// generatedSelector checks a Job that did not choose its selector: its pod
// template has the labels naming the Job (with the prefixed ones when
// prefixedLabels), and its selector selects them.
func generatedSelector(obj Object, prefixedLabels bool) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	if spec["manualSelector"] == true || spec["selector"] == nil {
		return nil // a missing selector is reported with the spec
	}
	md := jsonmap.Child(obj, "metadata")
	uid, name := jsonmap.String(md, "uid"), jsonmap.String(md, "name")
	var errs field.ErrorList
	if uid == "" {
		errs = append(errs, field.Required(metadataPath.Child("uid"), ""))
	}
	templateMD := jsonmap.Child(jsonmap.Child(spec, "template"), "metadata")
	want := map[string]string{controllerUIDLabel: uid, jobNameLabel: name}
	keys := []string{controllerUIDLabel, jobNameLabel}
	if prefixedLabels {
		keys = append(keys, batchPrefix+controllerUIDLabel, batchPrefix+jobNameLabel)
		want[batchPrefix+controllerUIDLabel], want[batchPrefix+jobNameLabel] = uid, name
	}
	labelsPath := templatePath.Child("metadata", "labels")
	for _, k := range keys {
		switch v, ok := jsonmap.Child(templateMD, "labels")[k]; {
		case !ok:
			errs = append(errs, field.Required(labelsPath.Key(k), fmt.Sprintf("must be '%s'", want[k])))
		case v != want[k]:
			errs = append(errs, field.Invalid(labelsPath.Key(k), templateMD["labels"], fmt.Sprintf("must be '%s'", want[k])))
		}
	}
	ls, _ := labelSelectorOf(spec["selector"])
	if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil && !sel.Matches(labels.Set(want)) {
		errs = append(errs, field.Invalid(selectorPath, spec["selector"], "`selector` not auto-generated"))
	}
	return errs
}

// jobSpecWithSelector checks a Job's spec and its selector, which must
// select the pod template.
func jobSpecWithSelector(spec Object) field.ErrorList {
	errs := jobSpec(spec, specPath)
	ls, present := labelSelectorOf(spec["selector"])
	if !present {
		errs = append(errs, field.Required(selectorPath, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, selectorPath)...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil {
		errs = append(errs, templateMatches(jsonmap.Child(spec, "template"), sel)...)
	}
	return errs
}

// jobSpec checks a Job's spec (or a CronJob's job template's) at path:
// its numbers, completion mode and pod template.
func jobSpec(spec Object, path *field.Path) field.ErrorList {
	errs := nonNegative(spec, path, "parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes")
	switch mode, ok := spec["completionMode"].(string); {
	case !ok, mode == "NonIndexed":
	case mode == "Indexed":
		if _, ok := spec["completions"]; !ok {
			errs = append(errs, field.Required(path.Child("completions"), "when completion mode is Indexed"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("completionMode"), mode, []string{"NonIndexed", "Indexed"}))
	}
	return append(errs, jobTemplate(jsonmap.Child(spec, "template"), path.Child("template"))...)
}

// normalizeSelector drops a selector's empty parts, which select nothing
// more.
func normalizeSelector(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		if l, ok := e.([]any); ok && len(l) == 0 {
			continue
		}
		out[k] = e
	}
	return out
}

// jobTemplate checks the pod template of a Job at path: its pods end,
// restarting on failure at most.
func jobTemplate(template Object, path *field.Path) field.ErrorList {
	errs := objectMeta(jsonmap.Child(template, "metadata"), path)
	spec := jsonmap.Child(template, "spec")
	errs = append(errs, podSpec(spec, path.Child("spec"))...)
	switch policy := str(spec, "restartPolicy"); policy {
	case "OnFailure", "Never":
	case "Always", "":
		errs = append(errs, field.Required(path.Child("spec", "restartPolicy"), `valid values: "OnFailure", "Never"`))
	default:
		errs = append(errs, field.NotSupported(path.Child("spec", "restartPolicy"), policy, []string{"OnFailure", "Never"}))
	}
	return errs
}

// CronJob checks a new CronJob. Its name leaves room for the 11
// characters ("-" and a timestamp) its controller appends to name a Job,
// whose names are at most 63 characters.
func CronJob(obj Object) field.ErrorList {
	errs := cronJob(obj, nil)
	if name := jsonmap.String(obj, "metadata", "name"); len(name) > 52 {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), name, "must be no more than 52 characters"))
	}
	return errs
}

// CronJobUpdate checks a CronJob's update (its time zone only if changed).
func CronJobUpdate(obj, old Object) field.ErrorList { return cronJob(obj, old) }

// cronJob checks a CronJob replacing old (nil on create): its schedule,
// time zone, concurrency policy, job template and history limits.
func cronJob(obj, old Object) field.ErrorList {
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	path := specPath.Child("schedule")
	var errs field.ErrorList
	if s, _ := spec["schedule"].(string); s == "" {
		errs = append(errs, field.Required(path, ""))
	} else {
		errs = append(errs, schedule(s, strings.Contains(str(oldSpec, "schedule"), "TZ"), spec["timeZone"] != nil, path)...)
	}
	errs = append(errs, nonNegative(spec, specPath, "startingDeadlineSeconds")...)
	if old == nil || !reflect.DeepEqual(spec["timeZone"], oldSpec["timeZone"]) {
		errs = append(errs, timeZone(spec, specPath.Child("timeZone"))...)
	}
	switch policy, _ := spec["concurrencyPolicy"].(string); policy {
	case "Allow", "Forbid", "Replace":
	case "":
		errs = append(errs, field.Required(specPath.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(specPath.Child("concurrencyPolicy"), policy, []string{"Allow", "Forbid", "Replace"}))
	}
	jobTemplatePath := specPath.Child("jobTemplate")
	jobSpecOf := jsonmap.Child(jsonmap.Child(spec, "jobTemplate"), "spec")
	errs = append(errs, jobSpec(jobSpecOf, jobTemplatePath.Child("spec"))...)
	if ls, present := labelSelectorOf(jobSpecOf["selector"]); present {
		errs = append(errs, field.Invalid(jobTemplatePath.Child("spec", "selector"), ls, "`selector` will be auto-generated"))
	}
	if jobSpecOf["manualSelector"] == true {
		errs = append(errs, field.NotSupported(jobTemplatePath.Child("spec", "manualSelector"), true, []string{"nil", "false"}))
	}
	return append(errs, nonNegative(spec, specPath, "successfulJobsHistoryLimit", "failedJobsHistoryLimit")...)
}

// scheduleParser reads the five-field schedules (and descriptors such as
// @hourly) CronJobs take.
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule checks a CronJob's schedule at path; a time zone belongs in
// timeZone, unless the schedule had one already (allowTZ).
func schedule(s string, allowTZ, hasTimeZone bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := scheduleParser.Parse(s); err != nil {
		errs = append(errs, field.Invalid(path, s, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(s, "TZ") && hasTimeZone:
		errs = append(errs, field.Invalid(path, s, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(s, "TZ"):
		errs = append(errs, field.Invalid(path, s, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

var timeZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// timeZone checks a CronJob's time zone: an IANA name this program's Go
// knows.
func timeZone(spec Object, path *field.Path) field.ErrorList {
	v, ok := spec["timeZone"]
	if !ok || v == nil {
		return nil
	}
	tz, _ := v.(string)
	if tz == "" {
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(path, tz, "unknown time zone "+tz)}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(tz, "Local") {
		errs = append(errs, field.Invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		errs = append(errs, field.Invalid(path, tz, err.Error()))
	}
	return errs
}
