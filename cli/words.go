package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// splitWords splits a command line as a POSIX shell would for the simple
// cases: blanks separate words, single quotes keep everything, double
// quotes keep everything but backslash escapes, a backslash escapes the
// next character.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, usageError("unterminated ' in the command line")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, usageError(`unterminated " in the command line`)
			}
			inWord = true
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// flags are the options the commands understand, as kubectl spells them.
type flags struct {
	namespace     string
	allNamespaces bool
	selector      string
	output        string
	watch         bool
	filename      string // -f: the file box is its content; "-" is stdin
	serverSide    bool
	force         bool // --force-conflicts
	fieldManager  string
	cascade       string
	patch         string
	patchType     string
	replicas      int
	replicasSet   bool
	overwrite     bool
	// showManagedFields: -o yaml|json keep metadata.managedFields.
	showManagedFields bool
	// What create deployment|configmap|secret and run make objects of.
	images       []string // --image, repeatable
	fromLiterals []string // --from-literal key=value, repeatable
	port         int      // --port, 0: none
}

// valued are the flags that take a value, by every spelling.
var valued = map[string]string{
	"-n": "namespace", "--namespace": "namespace",
	"-l": "selector", "--selector": "selector",
	"-o": "output", "--output": "output",
	"-f": "filename", "--filename": "filename",
	"--field-manager": "field-manager",
	"--cascade":       "cascade",
	"-p":              "patch", "--patch": "patch",
	"--type":         "type",
	"--replicas":     "replicas",
	"--image":        "image",
	"--from-literal": "from-literal",
	"--port":         "port",
}

var switches = map[string]string{
	"-A": "all-namespaces", "--all-namespaces": "all-namespaces",
	"-w": "watch", "--watch": "watch",
	"--server-side":         "server-side",
	"--force-conflicts":     "force-conflicts",
	"--overwrite":           "overwrite",
	"--show-managed-fields": "show-managed-fields",
	// delete returns once the API has answered, as kubectl's --wait=false:
	// the flag is accepted, either way, for commands copied from the docs.
	"--wait": "wait",
}

// parseFlags separates flags (anywhere on the line, as kubectl allows) from
// arguments.
func parseFlags(words []string) (flags, []string, error) {
	f := flags{cascade: "background", patchType: "strategic"}
	var args []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := strings.Cut(w, "=")
		if !strings.HasPrefix(w, "-") || w == "-" {
			args = append(args, w)
			continue
		}
		if sw, ok := switches[name]; ok {
			on := true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return f, nil, usageError(fmt.Sprintf("invalid argument %q for %q flag", value, name))
				}
				on = b
			}
			switch sw {
			case "all-namespaces":
				f.allNamespaces = on
			case "watch":
				f.watch = on
			case "server-side":
				f.serverSide = on
			case "force-conflicts":
				f.force = on
			case "overwrite":
				f.overwrite = on
			case "show-managed-fields":
				f.showManagedFields = on
			}
			continue
		}
		key, ok := valued[name]
		if !ok {
			return f, nil, usageError(fmt.Sprintf("unknown flag: %s (the console knows %s)", name, knownFlags()))
		}
		if !hasValue {
			if i+1 >= len(words) {
				return f, nil, usageError(fmt.Sprintf("flag needs an argument: %s", name))
			}
			i++
			value = words[i]
		}
		switch key {
		case "namespace":
			f.namespace = value
		case "selector":
			f.selector = value
		case "output":
			f.output = value
		case "filename":
			f.filename = value
		case "field-manager":
			f.fieldManager = value
		case "cascade":
			f.cascade = value
		case "patch":
			f.patch = value
		case "type":
			f.patchType = value
		case "image":
			f.images = append(f.images, value)
		case "from-literal":
			f.fromLiterals = append(f.fromLiterals, value)
		case "port":
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 || n > 65535 {
				return f, nil, usageError(fmt.Sprintf("invalid argument %q for \"--port\" flag", value))
			}
			f.port = n
		case "replicas":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return f, nil, usageError(fmt.Sprintf("invalid argument %q for \"--replicas\" flag", value))
			}
			f.replicas, f.replicasSet = n, true
		}
	}
	return f, args, nil
}

func knownFlags() string {
	return "-n -A -l -o -w -f --server-side --force-conflicts --field-manager --cascade --wait -p --type --replicas --overwrite --show-managed-fields --image --from-literal --port"
}

// ns is the namespace to use: -n, else "default".
func (f flags) ns() string {
	if f.namespace != "" {
		return f.namespace
	}
	return "default"
}

// source names the -f input in messages, as kubectl does.
func (f flags) source() string {
	if f.filename == "-" {
		return "STDIN"
	}
	return f.filename
}
