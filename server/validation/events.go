package validation

import (
	"fmt"
	"reflect"

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
	return eventCommon(obj, "involvedObject", "reportingComponent", "message")
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

// Event checks a new Event of events.k8s.io, strictly: the legacy checks
// (under the core type's field names, as kube-apiserver reports them),
// then an eventTime, a type, a valid series, and none of the deprecated
// fields.
func Event(obj Object) field.ErrorList {
	errs := legacyEvent(obj)
	errs = append(errs, eventSeries(obj)...)
	if obj["eventTime"] == nil {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if t := str(obj, "type"); t != "Normal" && t != "Warning" {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", "has invalid value: "+t))
	}
	for _, f := range [][2]string{{"deprecatedFirstTimestamp", "firstTimestamp"}, {"deprecatedLastTimestamp", "lastTimestamp"}} {
		if obj[f[0]] != nil {
			errs = append(errs, field.Invalid(field.NewPath(f[1]), "", "needs to be unset"))
		}
	}
	if intOf(obj["deprecatedCount"]) != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if jsonmap.String(obj, "deprecatedSource", "component") != "" || jsonmap.String(obj, "deprecatedSource", "host") != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// EventUpdate checks an update of an Event of events.k8s.io: the legacy
// checks, its series if it changed, and all but its series and metadata
// unchanged.
func EventUpdate(obj, old Object) field.ErrorList {
	errs := legacyEvent(obj)
	if !reflect.DeepEqual(obj["series"], old["series"]) {
		errs = append(errs, eventSeries(obj)...)
	}
	immutable := func(path string, v, was any, shown any) {
		if !reflect.DeepEqual(v, was) {
			errs = append(errs, field.Invalid(field.NewPath(path), shown, "field is immutable"))
		}
	}
	text := func(path, k string) { immutable(path, str(obj, k), str(old, k), str(obj, k)) }
	reference := func(path, k string) {
		v, was := jsonmap.Child(obj, k), jsonmap.Child(old, k)
		var shown any = internalJSON("core.ObjectReference", v)
		if v == nil && path == "related" {
			shown = nil
		}
		immutable(path, internalJSON("core.ObjectReference", v), internalJSON("core.ObjectReference", was), shown)
	}
	timestamp := func(path, k string) { immutable(path, obj[k], old[k], obj[k]) }
	reference("involvedObject", "regarding")
	text("reason", "reason")
	text("message", "note")
	immutable("source", internalJSON("core.EventSource", obj["deprecatedSource"]), internalJSON("core.EventSource", old["deprecatedSource"]), internalJSON("core.EventSource", obj["deprecatedSource"]))
	timestamp("firstTimestamp", "deprecatedFirstTimestamp")
	timestamp("lastTimestamp", "deprecatedLastTimestamp")
	immutable("count", intOf(obj["deprecatedCount"]), intOf(old["deprecatedCount"]), int32(intOf(obj["deprecatedCount"])))
	text("reason", "reason")
	text("type", "type")
	timestamp("eventTime", "eventTime")
	text("action", "action")
	reference("related", "related")
	text("reportingController", "reportingController")
	text("reportingInstance", "reportingInstance")
	return errs
}

// legacyEvent is what kube-apiserver checks of every Event, as CoreEvent
// does, for an Event of events.k8s.io.
func legacyEvent(obj Object) field.ErrorList {
	return eventCommon(obj, "regarding", "reportingController", "note")
}

// eventCommon is what kube-apiserver checks of an Event of either group,
// whose fields for the object it is about, its reporter and its message
// are named about, reporter and message: the object's namespace is
// reported as involvedObject's and the message as message, as the core
// type names them.
func eventCommon(obj Object, about, reporter, message string) field.ErrorList {
	ns := jsonmap.String(obj, "metadata", "namespace")
	aboutNS := jsonmap.String(obj, about, "namespace")
	var errs field.ErrorList
	mismatch := func() {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), aboutNS, "does not match event.namespace"))
	}
	if obj["eventTime"] == nil {
		switch {
		case aboutNS == "" && ns != "" && ns != "default":
			mismatch()
		case aboutNS != "" && ns != aboutNS:
			mismatch()
		}
	} else {
		if aboutNS == "" && ns != "default" && ns != "kube-system" {
			mismatch()
		}
		name := str(obj, reporter)
		if name == "" {
			errs = append(errs, field.Required(field.NewPath(reporter), ""))
		}
		for _, msg := range utilvalidation.IsQualifiedName(name) {
			errs = append(errs, field.Invalid(field.NewPath(reporter), name, msg))
		}
		errs = append(errs, eventText(obj, "reportingInstance", eventReportingInstanceLimit, true)...)
		errs = append(errs, eventText(obj, "action", eventActionLimit, true)...)
		errs = append(errs, eventText(obj, "reason", eventReasonLimit, true)...)
		if len(str(obj, message)) > eventNoteLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %d characters", eventNoteLimit)))
		}
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(ns) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ns, msg))
	}
	return errs
}

// eventSeries checks an Event's series, if any: seen at least twice, and
// when last.
func eventSeries(obj Object) field.ErrorList {
	series, ok := obj["series"].(map[string]any)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	if intOf(series["count"]) < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if series["lastObservedTime"] == nil {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}
