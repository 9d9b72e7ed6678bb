package celrules

import (
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
)

// deviceEnv is the environment of a device selector's expression (a
// DeviceClass's or a claim's request's): the device variable, its driver,
// attributes and capacity by domain, with the Kubernetes libraries. The
// attributes and capacities are dynamically typed: an expression that
// misuses one fails when it runs, not when it is written.
var deviceEnv = sync.OnceValues(func() (*cel.Env, error) {
	p, err := newProvider()
	if err != nil {
		return nil, err
	}
	const device = "kubernetes.Device"
	byDomain := types.NewMapType(types.StringType, types.NewMapType(types.StringType, types.DynType))
	p.structs[device] = map[string]*types.Type{
		"driver": types.StringType, "attributes": byDomain, "capacity": byDomain, "allowMultipleAllocations": types.BoolType,
	}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable("device", types.NewObjectType(device, traits.FieldTesterType|traits.IndexerType)),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
	}
	return cel.NewEnv(append(opts, library()...)...)
})

// DeviceSelectorErrors compiles device selectors' expressions and returns,
// for each, why it does not compile ("" if it does), worded as
// kube-apiserver words it.
func DeviceSelectorErrors(exprs []string) ([]string, error) {
	env, err := deviceEnv()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(exprs))
	for i, e := range exprs {
		if _, issues := env.Compile(e); issues != nil && issues.Err() != nil {
			out[i] = "compilation failed: " + issues.Err().Error()
		}
	}
	return out, nil
}
