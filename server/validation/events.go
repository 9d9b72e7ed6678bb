package validation

import (
	"fmt"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The lengths kube-apiserver allows an Event's texts.
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

// CoreEvent checks an Event of the core group, new or updated: only what
// kube-apiserver still checks of the legacy API. An Event without an
// eventTime names the namespace of the object it is about (none, or
// "default", for an object without one); one with an eventTime is a new
// style Event, with a reporter, an action and a reason.
func CoreEvent(obj Object) field.ErrorList {
	var errs field.ErrorList
	ns := jsonmap.String(obj, "metadata", "namespace")
	involvedNS := jsonmap.String(obj, "involvedObject", "namespace")
	mismatch := func() {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), involvedNS, "does not match event.namespace"))
	}
	if obj["eventTime"] == nil {
		switch {
		case involvedNS == "" && ns != "" && ns != "default":
			mismatch()
		case involvedNS != "" && ns != involvedNS:
			mismatch()
		}
	} else {
		if involvedNS == "" && ns != "default" && ns != "kube-system" {
			mismatch()
		}
		reporter := str(obj, "reportingComponent")
		if reporter == "" {
			errs = append(errs, field.Required(field.NewPath("reportingComponent"), ""))
		}
		for _, msg := range utilvalidation.IsQualifiedName(reporter) {
			errs = append(errs, field.Invalid(field.NewPath("reportingComponent"), reporter, msg))
		}
		errs = append(errs, eventText(obj, "reportingInstance", eventReportingInstanceLimit, true)...)
		errs = append(errs, eventText(obj, "action", eventActionLimit, true)...)
		errs = append(errs, eventText(obj, "reason", eventReasonLimit, true)...)
		errs = append(errs, eventText(obj, "message", eventNoteLimit, false)...)
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(ns) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ns, msg))
	}
	return errs
}

// CoreEventUpdate checks an update of a core Event: the Event as new.
func CoreEventUpdate(obj, _ Object) field.ErrorList { return CoreEvent(obj) }

// eventText checks an Event's text field k: at most limit characters, and
// set when required.
func eventText(obj Object, k string, limit int, required bool) field.ErrorList {
	var errs field.ErrorList
	s := str(obj, k)
	if required && s == "" {
		errs = append(errs, field.Required(field.NewPath(k), ""))
	}
	if len(s) > limit {
		errs = append(errs, field.Invalid(field.NewPath(k), "", fmt.Sprintf("can have at most %d characters", limit)))
	}
	return errs
}
