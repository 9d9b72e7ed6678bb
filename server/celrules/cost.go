package celrules

import (
	"fmt"
	"math"
	"slices"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/structural"
)

// kube-apiserver's limits on the estimated cost of rules: of one rule, and
// of all a schema's rules times the number of times each can run.
const (
	ruleCostLimit   = 10000000
	schemaCostLimit = 100000000
	// maxRequestBytes bounds the sizes of what a schema leaves unbounded.
	maxRequestBytes = 3 * 1024 * 1024
)

// estimator sizes the values a rule reads as kube-apiserver's declared
// types size them: strings, lists and maps from the schema's maxLength,
// maxItems and maxProperties, or, where unbounded, from the largest request
// kube-apiserver accepts; scalars and objects have no size.
type estimator struct {
	self *structural.Schema
}

func (e estimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 || path[0] != "self" && path[0] != "oldSelf" {
		return nil
	}
	s := e.self
	for _, p := range path[1:] {
		switch {
		case s == nil:
			return nil
		case p == "@items":
			s = s.Items
		case p == "@values":
			s = s.AdditionalProperties
		case p == "@keys":
			// A map's keys are strings of no declared size.
			return &checker.SizeEstimate{Min: 0, Max: 0}
		default:
			s = propertyNamed(s, p)
		}
	}
	if s == nil {
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: maxSize(s)}
}

// EstimateCallCost gives a comparison of the libraries' values a constant
// cost, as kube-apiserver's estimator does; the rest is cel-go's estimate.
func (estimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if (function == "_==_" || function == "_!=_") && len(args) == 2 && args[0].Type().Kind() == types.OpaqueKind {
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
	}
	return nil
}

// propertyNamed finds a property by the name rules use for it.
func propertyNamed(s *structural.Schema, name string) *structural.Schema {
	for prop, child := range s.Properties {
		if fieldName(prop) == name {
			return child
		}
	}
	return nil
}

// The largest JSON a date-time or a duration can take, quotes included.
const maxDateTimeJSON, maxDurationJSON, dateJSON = 32, 32, 12

// maxSize is the most elements a value of s can have, as kube-apiserver
// counts them: a string's bytes (four a character of maxLength), a list's
// items, a map's entries; none for scalars and objects.
func maxSize(s *structural.Schema) uint64 {
	unboundedString := uint64(maxRequestBytes - 2)
	switch {
	case s.IntOrString && s.MaxLength != nil:
		return 4 * nonNegative(*s.MaxLength)
	case s.IntOrString:
		return unboundedString
	case s.Type == "array" && s.MaxItems != nil:
		return nonNegative(*s.MaxItems)
	case s.Type == "array" && s.Items != nil:
		return (maxRequestBytes - 2) / (minSize(s.Items) + 1)
	case s.Type == "object" && s.AdditionalProperties != nil && s.MaxProperties != nil:
		return nonNegative(*s.MaxProperties)
	case s.Type == "object" && s.AdditionalProperties != nil:
		return (maxRequestBytes - 2) / (minSize(s.AdditionalProperties) + 6)
	case s.Type != "string":
		return 0
	}
	switch s.Format {
	case "byte":
		if s.MaxLength != nil {
			return nonNegative(*s.MaxLength)
		}
		return unboundedString
	case "duration":
		return maxDurationJSON
	case "date":
		return dateJSON
	case "date-time":
		return maxDateTimeJSON
	}
	switch {
	case s.MaxLength != nil:
		return 4 * nonNegative(*s.MaxLength)
	case len(s.Enum) > 0:
		var longest uint64
		for _, v := range s.Enum {
			if str, ok := v.(string); ok {
				longest = max(longest, uint64(len(str)))
			}
		}
		return longest
	}
	return unboundedString
}

// minSize is the fewest bytes a value of s takes in JSON, as kube-apiserver
// counts them: an object's braces and its required properties that have no
// default.
func minSize(s *structural.Schema) uint64 {
	switch {
	case s.IntOrString:
		return 1
	case s.Type == "object" && s.AdditionalProperties == nil:
		size := uint64(2)
		for _, name := range s.Required {
			if prop, ok := s.Properties[name]; ok && !prop.HasDefault {
				size += uint64(len(name)) + minSize(prop) + 4
			}
		}
		return size
	case s.Type == "boolean":
		return 4 // false
	case s.Type == "integer", s.Type == "number":
		return 1
	case s.Type == "string" && s.Format == "duration":
		return 3 // "0"
	case s.Type == "string" && s.Format == "date":
		return dateJSON
	case s.Type == "string" && s.Format == "date-time":
		return 21 // "YYYY-MM-DDTHH:MM:SS"
	}
	return 2 // "", [], {}
}

func nonNegative(n int64) uint64 { return uint64(max(n, 0)) }

// unbounded is the cardinality of a node below a list or a map of no
// declared size.
const unbounded = math.MaxUint64

// cardinality is how many times a node's rules can run in one object: the
// product of the sizes of the lists and maps above it (parent's) and s's
// own when list, unbounded once one is.
func cardinality(parent uint64, s *structural.Schema, list bool) uint64 {
	if !list || parent == unbounded {
		return parent
	}
	if s.Type == "array" && s.MaxItems == nil || s.Type == "object" && s.MaxProperties == nil {
		return unbounded
	}
	n := maxSize(s)
	if n != 0 && parent >= (math.MaxUint64-1)/n {
		return math.MaxUint64 - 1
	}
	return parent * n
}

// timesRun is how many times the rules of s, of the given cardinality, can
// run: below an unbounded list or map, as many values of s as the largest
// request holds.
func timesRun(s *structural.Schema, cardinality uint64) uint64 {
	if cardinality != unbounded {
		return cardinality
	}
	return maxRequestBytes / (minSize(s) + 1)
}

func costMessage(what string, cost, limit uint64) string {
	factor := float64(cost) / float64(limit)
	var shown string
	switch {
	case factor > 100:
		shown = "more than 100x"
	case factor < 1.5:
		shown = fmt.Sprintf("%fx", factor)
	default:
		shown = fmt.Sprintf("%.1fx", factor)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", what, shown)
}

// ruleCost is one rule's estimated cost and how many times it can run.
type ruleCost struct {
	path        *field.Path
	cost, times uint64
}

func (r ruleCost) total() uint64 {
	if r.times != 0 && r.cost > math.MaxUint64/r.times {
		return math.MaxUint64
	}
	return r.cost * r.times
}

// schemaCostErrors are the errors for a schema whose rules together cost
// too much: the (at most four) most expensive rules, among those costing at
// least a hundredth of the limit, then the schema's root.
func schemaCostErrors(root *field.Path, costs []ruleCost) field.ErrorList {
	var total uint64
	var expensive []ruleCost
	for _, c := range costs {
		total = addSat(total, c.total())
		if c.total() >= schemaCostLimit/100 {
			expensive = append(expensive, c)
		}
	}
	if total <= schemaCostLimit {
		return nil
	}
	slices.SortStableFunc(expensive, func(a, b ruleCost) int {
		switch {
		case a.total() > b.total():
			return -1
		case a.total() < b.total():
			return 1
		}
		return 0
	})
	var errs field.ErrorList
	for _, c := range expensive[:min(4, len(expensive))] {
		errs = append(errs, field.Forbidden(c.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
	}
	return append(errs, field.Forbidden(root, costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total, schemaCostLimit)))
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
