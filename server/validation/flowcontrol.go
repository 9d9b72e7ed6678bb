package validation

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The limits of a priority level's queues.
const (
	maxQueues   = 10 * 1000 * 1000
	maxHashBits = 60 // of the shuffle sharding that deals queues
)

// PriorityLevelConfiguration checks a priority level: Exempt exactly for
// the one named exempt, else Limited, with shares, a lendable percentage
// and a limit response that may queue.
func PriorityLevelConfiguration(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	typ := str(spec, "type")
	var errs field.ErrorList
	if (jsonmap.String(obj, "metadata", "name") == "exempt") != (typ == "Exempt") {
		errs = append(errs, field.Invalid(specPath.Child("type"), typ, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch typ {
	case "Exempt":
		if spec["limited"] != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if exempt := jsonmap.Child(spec, "exempt"); exempt != nil {
			errs = append(errs, sharesAndLending(exempt, specPath.Child("exempt"))...)
		}
	case "Limited":
		if spec["exempt"] != nil {
			errs = append(errs, field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		limited := jsonmap.Child(spec, "limited")
		if limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), "must not be empty when type is Limited"))
			break
		}
		path := specPath.Child("limited")
		if n := intOf(limited["nominalConcurrencyShares"]); n < 0 {
			errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), int32(n), "must be a non-negative integer"))
		}
		errs = append(errs, limitResponse(jsonmap.Child(limited, "limitResponse"), path.Child("limitResponse"))...)
		errs = append(errs, lendablePercent(limited, path)...)
		if n, ok := jsonmap.IntOf(limited["borrowingLimitPercent"]); ok && n < 0 {
			errs = append(errs, field.Invalid(path.Child("borrowingLimitPercent"), int32(n), "if specified, must be a non-negative integer"))
		}
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), typ, []string{"Exempt", "Limited"}))
	}
	return errs
}

// PriorityLevelConfigurationUpdate checks a priority level's update: the
// level as new.
func PriorityLevelConfigurationUpdate(obj, _ Object) field.ErrorList {
	return PriorityLevelConfiguration(obj)
}

// sharesAndLending checks an exempt level's shares and lendable percentage.
func sharesAndLending(exempt Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n, ok := jsonmap.IntOf(exempt["nominalConcurrencyShares"]); ok && n < 0 {
		errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), int32(n), "must be a non-negative integer"))
	}
	return append(errs, lendablePercent(exempt, path)...)
}

func lendablePercent(level Object, path *field.Path) field.ErrorList {
	if n, ok := jsonmap.IntOf(level["lendablePercent"]); ok && (n < 0 || n > 100) {
		return field.ErrorList{field.Invalid(path.Child("lendablePercent"), int32(n), "must be between 0 and 100, inclusive")}
	}
	return nil
}

// limitResponse checks what a level does with requests beyond its
// concurrency: reject them, or queue them in queues dealt by shuffle
// sharding.
func limitResponse(lr Object, path *field.Path) field.ErrorList {
	queuing := jsonmap.Child(lr, "queuing")
	switch typ := str(lr, "type"); typ {
	case "Reject":
		if queuing != nil {
			return field.ErrorList{field.Forbidden(path.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
	case "Queue":
		if queuing == nil {
			return field.ErrorList{field.Required(path.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
		}
		return queuingConfiguration(queuing, path.Child("queuing"))
	default:
		return field.ErrorList{field.NotSupported(path.Child("type"), typ, []string{"Queue", "Reject"})}
	}
	return nil
}

func queuingConfiguration(q Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	queues, hand := int32(intOf(q["queues"])), int32(intOf(q["handSize"]))
	if n := int32(intOf(q["queueLengthLimit"])); n <= 0 {
		errs = append(errs, field.Invalid(path.Child("queueLengthLimit"), n, "must be positive"))
	}
	switch {
	case queues <= 0:
		errs = append(errs, field.Invalid(path.Child("queues"), queues, "must be positive"))
	case queues > maxQueues:
		errs = append(errs, field.Invalid(path.Child("queues"), queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case hand <= 0:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand, "must be positive"))
	case hand > queues:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand, fmt.Sprintf("should not be greater than queues (%d)", queues)))
	case int(math.Ceil(math.Log2(float64(queues))*float64(hand))) > maxHashBits:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", queues, hand, maxHashBits)))
	}
	return errs
}
