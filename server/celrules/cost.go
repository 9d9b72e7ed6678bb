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

// estimator sizes the values a rule reads from the schema's maxLength,
// maxItems and maxProperties, or, where unbounded, from the largest
// request kube-apiserver accepts.
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
			return &checker.SizeEstimate{Min: 0, Max: maxRequestBytes - 2}
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

// maxSize is the most characters, items or entries a value of s can have.
func maxSize(s *structural.Schema) uint64 {
	switch {
	case s.Type == "string" && s.MaxLength != nil:
		return uint64(*s.MaxLength)
	case s.Type == "array" && s.MaxItems != nil:
		return uint64(*s.MaxItems)
	case s.Type == "object" && s.MaxProperties != nil:
		return uint64(*s.MaxProperties)
	case s.Type == "array" && s.Items != nil:
		return (maxRequestBytes - 2) / (minJSONSize(s.Items) + 1)
	case s.Type == "object" && s.AdditionalProperties != nil:
		return (maxRequestBytes - 2) / (minJSONSize(s.AdditionalProperties) + 4)
	}
	return maxRequestBytes - 2
}

// minJSONSize is the fewest bytes a value of s takes in JSON.
func minJSONSize(s *structural.Schema) uint64 {
	switch s.Type {
	case "string", "object", "array":
		return 2 // "", {}, []
	case "boolean":
		return 4 // true
	}
	return 1
}

// cardinality is how many times a node's rules can run in one object.
func cardinality(parent uint64, s *structural.Schema, list bool) uint64 {
	if !list {
		return parent
	}
	n := maxSize(s)
	if parent > math.MaxUint64/max(n, 1) {
		return math.MaxUint64
	}
	return parent * n
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
