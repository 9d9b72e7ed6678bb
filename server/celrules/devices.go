package celrules

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
)

// kube-apiserver's limits on a device selector's expression: its length,
// and its estimated cost on the largest device a ResourceSlice can hold.
const (
	deviceSelectorMaxLength = 10 * 1024
	deviceSelectorCostLimit = 1000000
)

// The sizes kube-apiserver declares for what the device variable holds
// (ResourceSlice's limits): the cost estimate reads them.
const (
	deviceDriverMaxLength   = 63
	deviceDomainMaxLength   = 63
	deviceIDMaxLength       = 32
	deviceAttributeMaxBytes = 64
	deviceMaxAttributes     = 32 // and as many capacities
)

// deviceEnv is the environment of a device selector's expression (a
// DeviceClass's or a claim's request's), as kube-apiserver v1.35 declares
// it: the device variable, a kubernetes.DRADevice with its driver, its
// attributes by domain and name (of unknown type, google.protobuf.Any, as
// a device's attribute can be a bool, an int, a string or a version) and
// its capacities by domain and name (quantities), with the Kubernetes
// libraries and cel.bind. allowMultipleAllocations is declared only with
// the DRAConsumableCapacity feature gate, alpha and off in v1.35, which
// kubeplay does not offer.
var deviceEnv = sync.OnceValues(func() (*cel.Env, error) {
	p, err := newProvider()
	if err != nil {
		return nil, err
	}
	const device = "kubernetes.DRADevice"
	p.structs[device] = map[string]*types.Type{
		"driver":     types.StringType,
		"attributes": types.NewMapType(types.StringType, types.NewMapType(types.StringType, types.AnyType)),
		"capacity":   types.NewMapType(types.StringType, types.NewMapType(types.StringType, quantityType)),
	}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable("device", types.NewObjectType(device, traits.FieldTesterType|traits.IndexerType)),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		ext.Lists(ext.ListsVersion(3)),
		ext.Bindings(ext.BindingsVersion(0)),
	}
	return cel.NewEnv(append(opts, library()...)...)
})

// DeviceSelectorErrors checks device selectors' expressions as
// kube-apiserver does: not too long, compiled, of type bool (or unknown),
// within the cost limit. Each error is reported at its selector's path.
func DeviceSelectorErrors(selectors []celtypes.DeviceSelector) (field.ErrorList, error) {
	env, err := deviceEnv()
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for _, s := range selectors {
		path := field.NewPath(s.Path)
		if len(s.Expression) > deviceSelectorMaxLength {
			errs = append(errs, field.TooLong(path, "", deviceSelectorMaxLength))
			continue
		}
		checked, issues := env.Compile(s.Expression)
		if issues != nil && issues.Err() != nil {
			errs = append(errs, field.Invalid(path, s.Expression, "compilation failed: "+issues.Err().Error()))
			continue
		}
		// The unknown type is google.protobuf.Any (an attribute's value),
		// not dyn: dyn(true) is refused.
		if out := checked.OutputType(); !out.IsExactType(types.BoolType) && !out.IsExactType(types.AnyType) {
			errs = append(errs, field.Invalid(path, s.Expression, fmt.Sprintf("must evaluate to bool or the unknown type, not %s", out)))
			continue
		}
		est, err := env.EstimateCost(checked, deviceSizes{})
		if err != nil {
			errs = append(errs, field.InternalError(path, fmt.Errorf("cost estimation failed: %w", err)))
			continue
		}
		if est.Max > deviceSelectorCostLimit {
			errs = append(errs, field.Forbidden(path, "too complex, exceeds cost limit"))
		}
	}
	return errs, nil
}

// deviceSizes sizes what the device variable holds for the cost estimate,
// as kube-apiserver declares it: the driver's name, the maps of attributes
// and capacities, their domains and names, and an attribute's value (also
// when read as a field of its domain's map: device.attributes[d].name).
type deviceSizes struct{}

func (deviceSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) < 2 || path[0] != "device" {
		return nil
	}
	size := func(n uint64) *checker.SizeEstimate { return &checker.SizeEstimate{Min: 0, Max: n} }
	attributes := path[1] == "attributes"
	switch rest := path[2:]; {
	case path[1] == "driver" && len(rest) == 0:
		return size(deviceDriverMaxLength)
	case !attributes && path[1] != "capacity":
		return nil
	case len(rest) == 0:
		return size(deviceMaxAttributes)
	case rest[0] == "@keys" && len(rest) == 1:
		return size(deviceDomainMaxLength)
	case rest[0] != "@values":
		return nil
	case len(rest) == 1:
		return size(deviceMaxAttributes)
	case rest[1] == "@keys" && len(rest) == 2:
		return size(deviceIDMaxLength)
	case attributes && len(rest) == 2:
		return size(deviceAttributeMaxBytes)
	case rest[1] == "@values" && len(rest) == 2:
		return size(0) // a quantity
	}
	return nil
}

// EstimateCallCost is the Kubernetes libraries' (see estimator).
func (deviceSizes) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return estimator{}.EstimateCallCost(function, overloadID, target, args)
}
