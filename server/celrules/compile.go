package celrules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// perCallLimit is kube-apiserver's limit on the cost of one evaluation of
// a rule.
const perCallLimit = 1000000

// Validator holds the compiled rules of one schema.
type Validator struct {
	root *node
	// budget is the cost all rules may spend on one object.
	budget int64
}

// node is one schema node with rules somewhere at or below it.
type node struct {
	schema     *structural.Schema
	resource   bool
	rules      []*rule
	properties map[string]*node
	items      *node
	additional *node
}

type rule struct {
	structural.Rule
	program    cel.Program
	message    cel.Program // messageExpression, if any
	transition bool        // refers to oldSelf
}

var reasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

// Compile compiles the rules of schema s (a CRD version's openAPIV3Schema,
// reported under path) and returns kube-apiserver's errors for the rules
// that do not compile. A schema without rules gives a nil Validator.
func Compile(s *structural.Schema, path *field.Path) (*Validator, field.ErrorList) {
	p, err := newProvider()
	if err != nil {
		return nil, field.ErrorList{field.InternalError(path, err)}
	}
	var costs []ruleCost
	n, errs := compileNode(p, s, path, "Object", true, 1, &costs)
	errs = append(errs, schemaCostErrors(path, costs)...)
	if n == nil {
		return nil, errs
	}
	return &Validator{root: n, budget: runtimeBudget}, errs
}

// compileNode compiles the rules at and below s, a node that can occur
// times times in an object, recording each rule's estimated cost.
func compileNode(p *provider, s *structural.Schema, path *field.Path, name string, resource bool, times uint64, costs *[]ruleCost) (*node, field.ErrorList) {
	var errs field.ErrorList
	n := &node{schema: s, resource: resource}
	// As kube-apiserver, the rules below a node are checked before its own.
	for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
		child, e := compileNode(p, s.Properties[prop], path.Child("properties").Key(prop), name+"."+prop, false, times, costs)
		errs = append(errs, e...)
		if child != nil {
			if n.properties == nil {
				n.properties = map[string]*node{}
			}
			n.properties[prop] = child
		}
	}
	if s.Items != nil {
		child, e := compileNode(p, s.Items, path.Child("items"), name+".@idx", false, cardinality(times, s, true), costs)
		errs = append(errs, e...)
		n.items = child
	}
	if s.AdditionalProperties != nil {
		child, e := compileNode(p, s.AdditionalProperties, path.Child("additionalProperties"), name+".@elem", false, cardinality(times, s, true), costs)
		errs = append(errs, e...)
		n.additional = child
	}
	if len(s.Rules) > 0 {
		selfType := p.declare(s, name, resource)
		envs := map[bool]*cel.Env{} // by optionalOldSelf
		for i, r := range s.Rules {
			env, ok := envs[r.OptionalOldSelf]
			if !ok {
				var err error
				if env, err = newEnv(p, selfType, r.OptionalOldSelf); err != nil {
					return nil, append(errs, field.InternalError(path, err))
				}
				envs[r.OptionalOldSelf] = env
			}
			compiled, e := compileRule(env, s, r, path.Child("x-kubernetes-validations").Index(i), timesRun(s, times), costs)
			errs = append(errs, e...)
			if compiled != nil {
				n.rules = append(n.rules, compiled)
			}
		}
	}
	if len(n.rules) == 0 && n.properties == nil && n.items == nil && n.additional == nil {
		return nil, errs
	}
	return n, errs
}

func newEnv(p *provider, selfType *types.Type, optionalOld bool) (*cel.Env, error) {
	oldType := selfType
	if optionalOld {
		oldType = types.NewOptionalType(selfType)
	}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable("self", selfType),
		cel.Variable("oldSelf", oldType),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
	}
	return cel.NewEnv(append(opts, library()...)...)
}

func compileRule(env *cel.Env, s *structural.Schema, r structural.Rule, path *field.Path, times uint64, costs *[]ruleCost) (*rule, field.ErrorList) {
	shown := celtypes.ValidationRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression, FieldPath: r.FieldPath}
	if r.Reason != "" {
		shown.Reason = &r.Reason
	}
	if r.OptionalOldSelf {
		t := true
		shown.OptionalOldSelf = &t
	}
	var errs field.ErrorList
	var err error
	if strings.TrimSpace(r.Rule) == "" {
		return nil, field.ErrorList{field.Required(path.Child("rule"), "rule is not specified")}
	}
	checked, issues := env.Compile(r.Rule)
	if issues != nil && issues.Err() != nil {
		errs = append(errs, field.Invalid(path.Child("rule"), shown, "compilation failed: "+issues.Err().Error()))
		if r.OptionalOldSelf {
			errs = append(errs, field.Invalid(path.Child("optionalOldSelf"), true, "may not be set if oldSelf is not used in rule"))
		}
		return nil, errs
	}
	if est, err := env.EstimateCost(checked, estimator{self: s}); err == nil {
		// A rule's cost counts once per value it can run on.
		c := ruleCost{path: path.Child("rule"), cost: est.Max, times: times}
		if c.total() > ruleCostLimit {
			errs = append(errs, field.Forbidden(path.Child("rule"), costMessage("estimated rule cost", c.total(), ruleCostLimit)))
		}
		*costs = append(*costs, c)
	}
	if checked.OutputType() != types.BoolType {
		errs = append(errs, field.Invalid(path.Child("rule"), shown, "cel expression must evaluate to a bool"))
	}
	out := &rule{Rule: r, transition: refersTo(checked.NativeRep(), "oldSelf")}
	if r.OptionalOldSelf && !out.transition {
		errs = append(errs, field.Invalid(path.Child("optionalOldSelf"), true, "may not be set if oldSelf is not used in rule"))
	}
	if r.Reason != "" && !slices.Contains(reasons, r.Reason) {
		errs = append(errs, field.NotSupported(path.Child("reason"), r.Reason, reasons))
	}
	if r.FieldPath != "" && !validFieldPath(s, r.FieldPath) {
		errs = append(errs, field.Invalid(path.Child("fieldPath"), r.FieldPath, "must be a valid path"))
	}
	if out.program, err = env.Program(checked, cel.CostLimit(perCallLimit)); err != nil {
		errs = append(errs, field.Invalid(path.Child("rule"), shown, "program instantiation failed: "+err.Error()))
	}
	if r.MessageExpression != "" {
		msg, issues := env.Compile(r.MessageExpression)
		switch {
		case issues != nil && issues.Err() != nil:
			errs = append(errs, field.Invalid(path.Child("messageExpression"), shown, "messageExpression compilation failed: "+issues.Err().Error()))
		case msg.OutputType() != types.StringType:
			errs = append(errs, field.Invalid(path.Child("messageExpression"), shown, "messageExpression must evaluate to a string"))
		default:
			if est, err := env.EstimateCost(msg, estimator{self: s}); err == nil {
				c := ruleCost{path: path.Child("messageExpression"), cost: est.Max, times: times}
				if c.total() > ruleCostLimit {
					errs = append(errs, field.Forbidden(c.path, costMessage("estimated messageExpression cost", c.total(), ruleCostLimit)))
				}
				*costs = append(*costs, c)
			}
			if out.message, err = env.Program(msg, cel.CostLimit(perCallLimit)); err != nil {
				errs = append(errs, field.Invalid(path.Child("messageExpression"), shown, "program instantiation failed: "+err.Error()))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// refersTo reports whether an expression uses the variable name.
func refersTo(a *ast.AST, name string) bool {
	found := false
	visitor := ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.IdentKind && e.AsIdent() == name {
			found = true
		}
	})
	ast.PostOrderVisit(a.Expr(), visitor)
	return found
}

// validFieldPath reports whether a rule's fieldPath (".spec.x",
// ".list[0]", "['a.b']") names a field of s.
func validFieldPath(s *structural.Schema, path string) bool {
	steps, ok := parseFieldPath(path)
	if !ok {
		return false
	}
	for _, st := range steps {
		switch {
		case st.index >= 0:
			if s.Items == nil {
				return false
			}
			s = s.Items
		case s.Properties != nil:
			child, ok := s.Properties[st.name]
			if !ok {
				return false
			}
			s = child
		case s.AdditionalProperties != nil:
			s = s.AdditionalProperties
		default:
			return false
		}
	}
	return true
}

type pathStep struct {
	name  string
	index int
}

// parseFieldPath reads a rule's fieldPath: .name, ['name'] and [index].
func parseFieldPath(path string) ([]pathStep, bool) {
	var steps []pathStep
	for path != "" {
		switch {
		case strings.HasPrefix(path, "."):
			path = path[1:]
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			if end == 0 {
				return nil, false
			}
			steps = append(steps, pathStep{name: path[:end], index: -1})
			path = path[end:]
		case strings.HasPrefix(path, "['"):
			end := strings.Index(path, "']")
			if end < 0 {
				return nil, false
			}
			steps = append(steps, pathStep{name: path[2:end], index: -1})
			path = path[end+2:]
		case strings.HasPrefix(path, "["):
			end := strings.Index(path, "]")
			var i int
			if end < 0 {
				return nil, false
			}
			if _, err := fmt.Sscanf(path[1:end], "%d", &i); err != nil {
				return nil, false
			}
			steps = append(steps, pathStep{index: i})
			path = path[end+1:]
		default:
			return nil, false
		}
	}
	return steps, true
}
