package playground

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"kubeplay/internal/jsonmap"
)

// environment is what a kubelet knows of a container's environment: the
// literal values (their $(VAR) references to earlier variables expanded)
// and the pod's own fields. opaque are the variables whose values kubeplay
// cannot know (from a ConfigMap, a Secret, a resource).
func environment(p, c jsonmap.Object) (env map[string]string, opaque map[string]bool) {
	env, opaque = map[string]string{}, map[string]bool{}
	for _, e := range jsonmap.Items(c["env"]) {
		name := stringOf(e["name"])
		if v, ok := e["value"].(string); ok {
			env[name], _ = expandReferences(v, env)
			delete(opaque, name)
			continue
		}
		if ref := jsonmap.Child(e, "valueFrom", "fieldRef"); ref != nil {
			if v, ok := podField(p, stringOf(ref["fieldPath"])); ok {
				env[name] = v
				delete(opaque, name)
				continue
			}
		}
		delete(env, name)
		opaque[name] = true
	}
	return env, opaque
}

// podField is the value of a downward API field reference.
func podField(p jsonmap.Object, fieldPath string) (string, bool) {
	for _, m := range []string{"labels", "annotations"} {
		if key, ok := strings.CutPrefix(fieldPath, "metadata."+m+"['"); ok {
			return jsonmap.String(p, "metadata", m, strings.TrimSuffix(key, "']")), true
		}
	}
	switch fieldPath {
	case "metadata.name", "metadata.namespace", "metadata.uid":
		return jsonmap.String(p, "metadata", strings.TrimPrefix(fieldPath, "metadata.")), true
	case "spec.nodeName", "spec.serviceAccountName":
		return jsonmap.String(p, "spec", strings.TrimPrefix(fieldPath, "spec.")), true
	case "status.podIP", "status.hostIP":
		return jsonmap.String(p, "status", strings.TrimPrefix(fieldPath, "status.")), true
	}
	return "", false
}

// expandReferences expands the $(VAR) references of s from env, as a
// kubelet does ("$$" escapes a "$"; a reference to a variable not in env
// stays as written). It returns the variables referred to that env lacks.
func expandReferences(s string, env map[string]string) (string, []string) {
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := env[name]; ok {
					b.WriteString(v)
				} else {
					b.WriteString("$(" + name + ")")
				}
				if env[name] == "" {
					missing = append(missing, name)
				}
				i += 2 + end
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), missing
}

// containerConfigError is why a kubelet cannot make the configuration of
// container c of pod p (CreateContainerConfigError), "" if it can: a
// volume mount's subPathExpr that refers to a variable with no value, or
// that expands to an absolute path or one that steps out with "..".
func containerConfigError(p, c jsonmap.Object) string {
	env, opaque := environment(p, c)
	for _, m := range jsonmap.Items(c["volumeMounts"]) {
		subPath := stringOf(m["subPath"])
		if expr := stringOf(m["subPathExpr"]); expr != "" {
			expanded, missing := expandReferences(expr, env)
			if slices.ContainsFunc(missing, func(name string) bool { return opaque[name] }) {
				continue // its value is unknown here: assume it is fine
			}
			if len(missing) > 0 {
				slices.Sort(missing)
				return "missing value for " + strings.Join(slices.Compact(missing), ", ")
			}
			subPath = expanded
		}
		switch {
		case subPath == "":
		case path.IsAbs(subPath):
			return fmt.Sprintf("error SubPath `%s` must not be an absolute path", subPath)
		case slices.Contains(strings.Split(subPath, "/"), ".."):
			return fmt.Sprintf("unable to provision SubPath `%s`: must not contain '..'", subPath)
		}
	}
	return ""
}
