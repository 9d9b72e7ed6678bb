package validation

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
)

// Dynamic resource allocation (resource.k8s.io): device classes, the
// claims for devices and their templates, and the slices drivers publish.

// deviceClass checks a DeviceClass's spec: selectors whose expressions
// compile, opaque configurations of a driver.
func deviceClass(ctx context.Context, spec Object) (field.ErrorList, error) {
	var selectors deviceSelectors
	errs := selectors.add(jsonmap.Items(spec["selectors"]), specPath.Child("selectors"))
	errs = append(errs, deviceConfigs(jsonmap.Items(spec["config"]), specPath.Child("config"))...)
	compileErrs, err := selectors.compile(ctx)
	return append(errs, compileErrs...), err
}

// deviceSelectors gathers the CEL expressions of device selectors, to be
// checked together.
type deviceSelectors []celtypes.DeviceSelector

// add checks selectors (at path): each a CEL one; it keeps their
// expressions.
func (d *deviceSelectors) add(selectors []map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range selectors {
		c := jsonmap.Child(s, "cel")
		if c == nil {
			errs = append(errs, field.Required(path.Index(i).Child("cel"), ""))
			continue
		}
		expr, _ := c["expression"].(string)
		*d = append(*d, celtypes.DeviceSelector{Path: path.Index(i).Child("cel", "expression").String(), Expression: expr})
	}
	return errs
}

// compile reports the expressions that kube-apiserver refuses.
func (d deviceSelectors) compile(ctx context.Context) (field.ErrorList, error) {
	return celeval.DeviceSelectorErrors(ctx, d)
}

// deviceConfigs checks opaque configurations: a driver's name and its
// parameters, a JSON object.
func deviceConfigs(configs []map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range configs {
		p := path.Index(i).Child("opaque")
		opaque := jsonmap.Child(c, "opaque")
		if opaque == nil {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		errs = append(errs, driverName(p.Child("driver"), str(opaque, "driver"))...)
		switch params, ok := opaque["parameters"]; {
		case !ok || params == nil:
			errs = append(errs, field.Required(p.Child("parameters"), ""))
		default:
			if _, isObject := params.(map[string]any); !isObject {
				errs = append(errs, field.Invalid(p.Child("parameters"), "<value omitted>", "must be a valid JSON object"))
			}
		}
	}
	return errs
}

func driverName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// resourceClaimSpec checks the spec of a claim (at path): its requests,
// named, each of exactly one kind, of a device class; its constraints,
// naming its requests.
func resourceClaimSpec(ctx context.Context, spec Object, path *field.Path) (field.ErrorList, error) {
	devices := jsonmap.Child(spec, "devices")
	path = path.Child("devices")
	var errs field.ErrorList
	var selectors deviceSelectors
	names, dups := uniqueNames{}, field.ErrorList{}
	for i, r := range jsonmap.Items(devices["requests"]) {
		p := path.Child("requests").Index(i)
		name, _ := r["name"].(string)
		errs = append(errs, dnsLabel(p.Child("name"), name)...)
		dups = append(dups, names.add(p, name)...)
		exactly := jsonmap.Child(r, "exactly")
		alternatives := jsonmap.Items(r["firstAvailable"])
		switch {
		case exactly != nil:
			errs = append(errs, deviceRequest(exactly, p.Child("exactly"), &selectors)...)
		case len(alternatives) == 0:
			errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
		default:
			for j, sub := range alternatives {
				sp := p.Child("firstAvailable").Index(j)
				name, _ := sub["name"].(string)
				errs = append(errs, dnsLabel(sp.Child("name"), name)...)
				errs = append(errs, deviceRequest(sub, sp, &selectors)...)
			}
		}
	}
	// A list's duplicates follow its items' errors (as kube-apiserver).
	errs = append(errs, dups...)
	for i, c := range jsonmap.Items(devices["constraints"]) {
		p := path.Child("constraints").Index(i)
		requests := jsonmap.Strings(c, "requests")
		for j, r := range requests {
			rp := p.Child("requests").Index(j)
			request, _, _ := strings.Cut(r, "/")
			errs = append(errs, dnsLabel(rp, r)...)
			if !names[request] {
				errs = append(errs, field.Invalid(rp, r, "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"))
			}
			if slices.Contains(requests[:j], r) {
				errs = append(errs, field.Duplicate(rp, r))
			}
		}
		if attr, ok := c["matchAttribute"].(string); !ok {
			errs = append(errs, field.Required(p.Child("matchAttribute"), ""))
		} else {
			errs = append(errs, fullyQualifiedName(p.Child("matchAttribute"), attr)...)
		}
	}
	compileErrs, err := selectors.compile(ctx)
	return append(errs, compileErrs...), err
}

// deviceRequest checks a request for devices (at path; exactly or one of
// firstAvailable): its class, its selectors (kept in selectors), its
// allocation mode and count.
func deviceRequest(r Object, path *field.Path, selectors *deviceSelectors) field.ErrorList {
	className, _ := r["deviceClassName"].(string)
	errs := driverName(path.Child("deviceClassName"), className)
	errs = append(errs, selectors.add(jsonmap.Items(r["selectors"]), path.Child("selectors"))...)
	switch mode, _ := r["allocationMode"].(string); mode {
	case "ExactCount":
		if n := intOf(r["count"]); n <= 0 {
			errs = append(errs, field.Invalid(path.Child("count"), n, "must be greater than zero"))
		}
	case "All", "":
	default:
		errs = append(errs, field.NotSupported(path.Child("allocationMode"), mode, []string{"All", "ExactCount"}))
	}
	return errs
}

// qualifiedName checks the name of a device's attribute or capacity: a C
// identifier, after a driver's domain and a slash if any.
func qualifiedName(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	cIdentifier := func(s string) {
		for _, msg := range utilvalidation.IsCIdentifier(s) {
			errs = append(errs, field.Invalid(path, s, msg))
		}
	}
	switch parts := strings.Split(name, "/"); len(parts) {
	case 1:
		cIdentifier(parts[0])
	case 2:
		if parts[0] == "" {
			errs = append(errs, field.Required(path, "the domain must not be empty"))
		} else {
			errs = append(errs, driverName(path, parts[0])...)
		}
		if parts[1] == "" {
			errs = append(errs, field.Required(path, "the name must not be empty"))
		} else {
			cIdentifier(parts[1])
		}
	default:
		errs = append(errs, field.Invalid(path, name, "must be either <domain>/<identifier> or only <identifier>"))
	}
	return errs
}

// fullyQualifiedName is a qualifiedName with its domain.
func fullyQualifiedName(path *field.Path, name string) field.ErrorList {
	errs := qualifiedName(path, name)
	if domain, _, ok := strings.Cut(name, "/"); !ok || domain == "" {
		errs = append(errs, field.Invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs
}

// immutableSpec is the error of an update of a claim's or a claim
// template's spec, printed as the internal type internalType.
func immutableSpec(spec, oldSpec Object, internalType string) field.ErrorList {
	if reflect.DeepEqual(spec, oldSpec) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath, internalJSON(internalType, spec), "field is immutable")}
}

// resourceSlice checks a ResourceSlice's spec: its driver, pool, the one
// way it names its nodes, and its devices.
func resourceSlice(spec Object) field.ErrorList {
	errs := driverName(specPath.Child("driver"), str(spec, "driver"))
	pool := jsonmap.Child(spec, "pool")
	poolPath := specPath.Child("pool")
	switch name := str(pool, "name"); {
	case name == "":
		errs = append(errs, field.Required(poolPath.Child("name"), ""))
	default:
		if len(name) > utilvalidation.DNS1123SubdomainMaxLength {
			errs = append(errs, field.TooLong(poolPath.Child("name"), "", utilvalidation.DNS1123SubdomainMaxLength))
		}
		for _, part := range strings.Split(name, "/") {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(part) {
				errs = append(errs, field.Invalid(poolPath.Child("name"), name, msg))
			}
		}
	}
	if n := intOf(pool["generation"]); n < 0 {
		errs = append(errs, field.Invalid(poolPath.Child("generation"), n, "must be greater than or equal to zero"))
	}
	if n := intOf(pool["resourceSliceCount"]); n <= 0 {
		errs = append(errs, field.Invalid(poolPath.Child("resourceSliceCount"), n, "must be greater than zero"))
	}
	set := 0
	for _, k := range []string{"nodeSelector", "allNodes", "perDeviceNodeSelection"} {
		if v, ok := spec[k]; ok && v != nil && v != false {
			set++
		}
	}
	if nodeName, ok := spec["nodeName"].(string); ok {
		switch {
		case nodeName == "":
			errs = append(errs, field.Invalid(specPath.Child("nodeName"), "", "must be either unset or set to a non-empty string"))
		default:
			set++
			for _, msg := range utilvalidation.IsDNS1123Subdomain(nodeName) {
				errs = append(errs, field.Invalid(specPath.Child("nodeName"), nodeName, msg))
			}
		}
	}
	if set == 0 {
		errs = append(errs, field.Required(specPath, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	}
	names, dups := uniqueNames{}, field.ErrorList{}
	for i, d := range jsonmap.Items(spec["devices"]) {
		p := specPath.Child("devices").Index(i)
		name, _ := d["name"].(string)
		errs = append(errs, dnsLabel(p.Child("name"), name)...)
		dups = append(dups, names.add(p, name)...)
		attributes := jsonmap.Child(d, "attributes")
		for _, k := range slices.Sorted(maps.Keys(attributes)) {
			ap := p.Child("attributes").Key(k)
			errs = append(errs, qualifiedName(ap, k)...)
			values := 0
			for _, v := range []string{"int", "bool", "string", "version"} {
				if _, ok := jsonmap.Child(attributes, k)[v]; ok {
					values++
				}
			}
			if values != 1 {
				errs = append(errs, field.Invalid(ap, "", "exactly one value must be specified"))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(jsonmap.Child(d, "capacity"))) {
			errs = append(errs, qualifiedName(p.Child("capacity").Key(k), k)...)
		}
	}
	return append(errs, dups...) // last, as a claim's requests
}

// resourceSliceUpdate checks a ResourceSlice's update: as new, its driver,
// node and pool unchanged.
func resourceSliceUpdate(spec, oldSpec Object) field.ErrorList {
	var errs field.ErrorList
	if d := str(spec, "driver"); d != str(oldSpec, "driver") {
		errs = append(errs, field.Invalid(specPath.Child("driver"), d, "field is immutable"))
	}
	if !reflect.DeepEqual(spec["nodeName"], oldSpec["nodeName"]) {
		errs = append(errs, field.Invalid(specPath.Child("nodeName"), spec["nodeName"], "field is immutable"))
	}
	if n := str(jsonmap.Child(spec, "pool"), "name"); n != str(jsonmap.Child(oldSpec, "pool"), "name") {
		errs = append(errs, field.Invalid(specPath.Child("pool", "name"), n, "field is immutable"))
	}
	return append(errs, resourceSlice(spec)...)
}
