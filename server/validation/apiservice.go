package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// apiService checks an APIService: named after the group version it
// serves, a group (only the legacy v1 has none), a version, and its
// priorities in range.
func apiService(name string, spec Object) field.ErrorList {
	var errs field.ErrorList
	group, version := str(spec, "group"), str(spec, "version")
	if want := version + "." + group; name != want {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), name, "must be `spec.version+\".\"+spec.group`: \""+want+"\""))
	}
	if group == "" && version != "v1" {
		errs = append(errs, field.Required(specPath.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(group) {
			errs = append(errs, field.Invalid(specPath.Child("group"), group, msg))
		}
	}
	for _, msg := range utilvalidation.IsDNS1035Label(version) {
		errs = append(errs, field.Invalid(specPath.Child("version"), version, msg))
	}
	if p := intOf(spec["groupPriorityMinimum"]); p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(specPath.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := intOf(spec["versionPriority"]); p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(specPath.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	return errs
}
