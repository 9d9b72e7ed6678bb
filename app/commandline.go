package app

import (
	"fmt"
	"slices"
	"strings"
)

// commandLine is a command line in the style of kube-apiserver's and etcd's
// (pflag): --name=value, --name value, and --name alone for a switch; one
// dash works as two.
type commandLine struct {
	// values holds each flag's values, in the order given (a flag may be
	// repeated).
	values map[string][]string
	// unknown are the flags the program does not know, in the order given.
	unknown []string
	// args are the arguments that are not flags.
	args []string
}

// parseCommandLine reads args against known, which maps each flag name to
// the type of value it takes ("bool": a switch, whose value is optional).
// A flag not in known takes a value only after "=".
func parseCommandLine(args []string, known map[string]string) (*commandLine, error) {
	cl := &commandLine{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			cl.args = append(cl.args, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			cl.args = append(cl.args, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name == "h" {
			name = "help"
		}
		typ, isKnown := known[name]
		if !isKnown && !slices.Contains(cl.unknown, name) {
			cl.unknown = append(cl.unknown, name)
		}
		switch {
		case hasValue:
		case !isKnown || typ == "bool":
			value = "true"
		case i+1 < len(args):
			i++
			value = args[i]
		default:
			return nil, fmt.Errorf("flag needs an argument: --%s", name)
		}
		cl.values[name] = append(cl.values[name], value)
	}
	return cl, nil
}

// value is the last value given to flag name, or "".
func (cl *commandLine) value(name string) string {
	v := cl.values[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// list is every value given to flag name, each split at commas, as pflag's
// string slices are.
func (cl *commandLine) list(name string) []string {
	var out []string
	for _, v := range cl.values[name] {
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// boolean is the value of switch name, or def when it is not given.
func (cl *commandLine) boolean(name string, def bool) (bool, error) {
	if _, ok := cl.values[name]; !ok {
		return def, nil
	}
	switch v := strings.ToLower(cl.value(name)); v {
	case "true", "t", "1":
		return true, nil
	case "false", "f", "0":
		return false, nil
	default:
		return false, fmt.Errorf("invalid argument %q for --%s: want true or false", v, name)
	}
}

// given lists the flags given that are in names, sorted.
func (cl *commandLine) given(names func(string) bool) []string {
	var out []string
	for name := range cl.values {
		if names(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
