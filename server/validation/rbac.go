package validation

import (
	"k8s.io/apimachinery/pkg/api/validation/path"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

const rbacGroup = "rbac.authorization.k8s.io"

// Role checks a Role's rules.
func Role(obj Object) field.ErrorList { return policyRules(obj, true) }

// RoleUpdate checks a Role's update: the Role as new.
func RoleUpdate(obj, _ Object) field.ErrorList { return Role(obj) }

// ClusterRole checks a ClusterRole's rules (unless they are aggregated).
func ClusterRole(obj Object) field.ErrorList { return policyRules(obj, false) }

// ClusterRoleUpdate checks a ClusterRole's update: the ClusterRole as new.
func ClusterRoleUpdate(obj, _ Object) field.ErrorList { return ClusterRole(obj) }

// policyRules checks the rules of a role (namespaced: a Role): verbs, and
// either resources of API groups or non-resource URLs (not in a Role).
func policyRules(obj Object, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range jsonmap.Items(obj["rules"]) {
		at := field.NewPath("rules").Index(i)
		if len(strs(r["verbs"])) == 0 {
			errs = append(errs, field.Required(at.Child("verbs"), "verbs must contain at least one value"))
		}
		if urls := strs(r["nonResourceURLs"]); len(urls) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(at.Child("nonResourceURLs"), urls, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(strs(r["apiGroups"])) > 0 || len(strs(r["resources"])) > 0 || len(strs(r["resourceNames"])) > 0 {
				errs = append(errs, field.Invalid(at.Child("nonResourceURLs"), urls, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(strs(r["apiGroups"])) == 0 {
			errs = append(errs, field.Required(at.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(strs(r["resources"])) == 0 {
			errs = append(errs, field.Required(at.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// strs is a decoded list of strings.
func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// RoleBinding checks a RoleBinding: its role and subjects.
func RoleBinding(obj Object) field.ErrorList { return roleBinding(obj, true) }

// RoleBindingUpdate checks a RoleBinding's update: the binding as new, its
// role unchanged.
func RoleBindingUpdate(obj, old Object) field.ErrorList {
	return append(RoleBinding(obj), sameRoleRef(obj, old)...)
}

// ClusterRoleBinding checks a ClusterRoleBinding: its role and subjects
// (service accounts with their namespace).
func ClusterRoleBinding(obj Object) field.ErrorList { return roleBinding(obj, false) }

// ClusterRoleBindingUpdate checks a ClusterRoleBinding's update: the
// binding as new, its role unchanged.
func ClusterRoleBindingUpdate(obj, old Object) field.ErrorList {
	return append(ClusterRoleBinding(obj), sameRoleRef(obj, old)...)
}

func roleBinding(obj Object, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	ref := jsonmap.Child(obj, "roleRef")
	refPath := field.NewPath("roleRef")
	if group := str(ref, "apiGroup"); group != rbacGroup {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), group, []string{rbacGroup}))
	}
	kinds := []string{"Role", "ClusterRole"}
	if !namespaced {
		kinds = []string{"ClusterRole"}
	}
	if kind := str(ref, "kind"); kind != "ClusterRole" && (kind != "Role" || !namespaced) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), kind, kinds))
	}
	if name := str(ref, "name"); name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(name) {
			errs = append(errs, field.Invalid(refPath.Child("name"), name, msg))
		}
	}
	for i, s := range jsonmap.Items(obj["subjects"]) {
		errs = append(errs, subject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// subject checks a binding's subject: a service account (of a namespace,
// if the binding has none), a user or a group.
func subject(s Object, namespaced bool, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	name, group := str(s, "name"), str(s, "apiGroup")
	if name == "" {
		errs = append(errs, field.Required(at.Child("name"), ""))
	}
	switch kind := str(s, "kind"); kind {
	case "ServiceAccount":
		if name != "" {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(at.Child("name"), name, msg))
			}
		}
		if group != "" {
			errs = append(errs, field.NotSupported(at.Child("apiGroup"), group, []string{""}))
		}
		if !namespaced && str(s, "namespace") == "" {
			errs = append(errs, field.Required(at.Child("namespace"), ""))
		}
	case "User", "Group":
		if group != rbacGroup {
			errs = append(errs, field.NotSupported(at.Child("apiGroup"), group, []string{rbacGroup}))
		}
	default:
		errs = append(errs, field.NotSupported(at.Child("kind"), kind, []string{"ServiceAccount", "User", "Group"}))
	}
	return errs
}

// roleRef is a binding's role as kube-apiserver prints it (its Go type).
type roleRef struct{ APIGroup, Kind, Name string }

// sameRoleRef checks that an update keeps a binding's role.
func sameRoleRef(obj, old Object) field.ErrorList {
	refOf := func(o Object) roleRef {
		r := jsonmap.Child(o, "roleRef")
		return roleRef{APIGroup: str(r, "apiGroup"), Kind: str(r, "kind"), Name: str(r, "name")}
	}
	if ref := refOf(obj); ref != refOf(old) {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}
