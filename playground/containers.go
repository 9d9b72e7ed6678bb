package playground

import (
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"kubeplay/internal/jsonmap"
)

// What a simulated container does. No process runs: the kubelets read
// what a container would do from its command and arguments, interpreting
// the small programs that tests and tutorials give (`sh -c 'echo hi; sleep
// 5; exit 3'`, `true`, `sleep 3600`, `while true; do ...; done`). A
// command not understood is a server that runs until it is stopped; inside
// a shell script, one that succeeds at once.

// program is a simulated container's run.
type program struct {
	// output is what it prints, in order, each line at an offset from its
	// start.
	output []printed
	// forever: it never ends by itself.
	forever bool
	// runs is how long it runs before it exits with exitCode.
	runs     time.Duration
	exitCode int
	// message is what it writes to its termination message file.
	message string
	// ignoresTerm: it is a shell or a sleep running as PID 1, which does
	// not act on SIGTERM, so stopping it takes the whole grace period.
	ignoresTerm bool
	// files are the files it creates and removes, in order: what an exec
	// probe's `cat /tmp/healthy` finds.
	files []fileChange
	// serves: it is the image's own server (or a program kubeplay does not
	// know), which answers on the container's ports; a script does not.
	serves bool
}

// fileChange is a file created (touch, mkdir, a redirection) or removed
// (rm) at an offset from the program's start.
type fileChange struct {
	at     time.Duration
	path   string
	exists bool
}

// fileAt reports whether the program has path after running for d, and
// whether it knows: a path it never touched is the image's business, but
// for /tmp, which starts empty.
func (p program) fileAt(path string, d time.Duration) (exists, known bool) {
	tmp := strings.HasPrefix(path, "/tmp/")
	seen := false
	for _, f := range p.files {
		if f.path != path {
			continue
		}
		if f.at > d {
			if !seen { // there before unless the program creates it
				return !f.exists && !tmp, true
			}
			break
		}
		exists, seen = f.exists, true
	}
	return exists, seen || tmp
}

type printed struct {
	at   time.Duration
	text string
}

// shellImages start a shell when given no command: with no terminal it
// reads nothing and exits at once.
var shellImages = map[string]bool{"busybox": true, "alpine": true, "ubuntu": true, "debian": true, "bash": true,
	"centos": true, "fedora": true, "nonroot": true}

// imageName is an image reference's repository's last element
// ("registry.k8s.io/e2e-test-images/busybox:1.36.1-1" -> "busybox").
func imageName(image string) string {
	name := path.Base(image)
	if i := strings.IndexAny(name, ":@"); i >= 0 {
		name = name[:i]
	}
	return name
}

// programOf is what container c (an entry of a pod's containers or
// initContainers) of pod p does.
func programOf(p, c jsonmap.Object) program { return programFinding(p, c, nil) }

// programFinding is what container c of pod p does when, at its start, it
// finds the files found says (known: found knows of path). A file that
// found does not know of, and the program did not make, is the image's:
// there.
func programFinding(p, c jsonmap.Object, found func(path string) (exists, known bool)) program {
	argv := append(jsonmap.StringsOf(c["command"]), jsonmap.StringsOf(c["args"])...)
	if len(jsonmap.StringsOf(c["command"])) == 0 && !shellImages[imageName(stringOf(c["image"]))] {
		// The image's own entrypoint: a server, as far as kubeplay knows.
		return program{forever: true, serves: true}
	}
	if len(argv) == 0 {
		argv = []string{"sh"}
	}
	sh := newShell(p, c)
	if found != nil {
		sh.files = func(path string) (exists, known bool) {
			for _, f := range sh.prog.files {
				if f.path == path {
					exists, known = f.exists, true
				}
			}
			if known {
				return exists, true
			}
			return found(path)
		}
	}
	if !sh.exec(argv) {
		return program{forever: true, serves: true}
	}
	return sh.prog
}

// newShell is the interpreter of what runs in container c of pod p.
func newShell(p, c jsonmap.Object) *shell {
	env, _ := environment(p, c)
	if _, ok := env["HOSTNAME"]; !ok {
		env["HOSTNAME"] = jsonmap.String(p, "metadata", "name")
	}
	messagePath := stringOf(c["terminationMessagePath"])
	if messagePath == "" {
		messagePath = "/dev/termination-log"
	}
	return &shell{env: env, messagePath: messagePath, exited: -1}
}

// exec runs argv to its end (sh.prog), reporting whether kubeplay
// understands it: a script file, or a program it does not know, runs until
// it is stopped.
func (sh *shell) exec(argv []string) bool {
	switch base := path.Base(argv[0]); {
	case isShell(base):
		sh.prog.ignoresTerm = true
		script := ""
		for i, a := range argv[1:] {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "c") && i+2 < len(argv) {
				script = argv[i+2]
				break
			}
		}
		if script == "" && len(argv) > 1 {
			return false // a script file kubeplay cannot read
		}
		sh.run(sh.parse(script))
	default:
		sh.prog.ignoresTerm = base == "sleep"
		if !sh.builtin(argv) {
			return false
		}
	}
	if sh.exited < 0 {
		sh.exited = sh.status
	}
	sh.prog.exitCode = sh.exited
	sh.prog.runs = sh.elapsed
	return true
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "ash", "dash", "zsh":
		return true
	}
	return false
}

// shell interprets a script's commands, keeping the time they take and what
// they print.
type shell struct {
	env         map[string]string
	messagePath string
	// files are the files the commands find (an exec probe's, those of
	// its container when it runs); nil: every file is there.
	files   func(path string) (exists, known bool)
	prog    program
	elapsed time.Duration
	status  int
	// exited is the code the script exited with (exit, or a program that
	// ends), -1 while it runs.
	exited int
}

// A statement is one command of a script, with how it joins the next one
// (";", "&&", "||", "&", "|").
type statement struct {
	words []string
	join  string
}

// parse splits a script into statements: words with quotes and variables
// resolved, operators apart.
func (sh *shell) parse(script string) []statement {
	var out []statement
	var words []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	end := func(join string) {
		flushWord()
		if len(words) > 0 || join != ";" {
			out = append(out, statement{words: words, join: join})
		}
		words = nil
	}
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			word.WriteString(string(rs[i+1 : min(j, len(rs))]))
			i = j
		case r == '"':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
					word.WriteRune(rs[j])
				} else if rs[j] == '$' {
					n, v := sh.variable(rs[j:])
					word.WriteString(v)
					j += n - 1
				} else {
					word.WriteRune(rs[j])
				}
				j++
			}
			i = j
		case r == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' {
				inWord = true
				word.WriteRune(rs[i])
			}
		case r == '$':
			inWord = true
			n, v := sh.variable(rs[i:])
			word.WriteString(v)
			i += n - 1
		case r == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			end(";")
		case r == ';' || r == '\n':
			end(";")
		case r == '&' && i+1 < len(rs) && rs[i+1] == '&':
			end("&&")
			i++
		case r == '|' && i+1 < len(rs) && rs[i+1] == '|':
			end("||")
			i++
		case r == '|':
			end("|")
		case r == '&' && (i == 0 || rs[i-1] != '>') && (i+1 >= len(rs) || rs[i+1] != '>'):
			end("&")
		case r == '>' || r == '<':
			flushWord()
			op := string(r)
			for i+1 < len(rs) && (rs[i+1] == '>' || rs[i+1] == '&') {
				i++
				op += string(rs[i])
			}
			words = append(words, op)
		case r == ' ' || r == '\t':
			flushWord()
		default:
			inWord = true
			word.WriteRune(r)
		}
	}
	end(";")
	return out
}

// variable reads the variable reference at the start of rs ($X, ${X},
// $?, $(...)): how many runes it takes and its value. $X and ${X} stay as
// they are, for builtin to expand when it runs (a loop sets variables).
func (sh *shell) variable(rs []rune) (int, string) {
	if len(rs) < 2 {
		return 1, "$"
	}
	switch rs[1] {
	case '{':
		for j := 2; j < len(rs); j++ {
			if rs[j] == '}' {
				return j + 1, string(rs[:j+1])
			}
		}
		return len(rs), ""
	case '(':
		depth := 0
		for j := 1; j < len(rs); j++ {
			if rs[j] == '(' {
				depth++
			} else if rs[j] == ')' {
				if depth--; depth == 0 {
					return j + 1, sh.substitute(string(rs[2:j]))
				}
			}
		}
		return len(rs), ""
	case '?':
		return 2, strconv.Itoa(sh.status)
	case '$':
		return 2, "1"
	}
	j := 1
	for j < len(rs) && (rs[j] == '_' || rs[j] >= 'a' && rs[j] <= 'z' || rs[j] >= 'A' && rs[j] <= 'Z' || rs[j] >= '0' && rs[j] <= '9') {
		j++
	}
	if j == 1 {
		return 1, "$"
	}
	return j, string(rs[:j])
}

// run runs statements until the script ends, exits, or runs forever.
func (sh *shell) run(stmts []statement) {
	skip := ""
	for i := 0; i < len(stmts) && sh.exited < 0 && !sh.prog.forever; i++ {
		st := stmts[i]
		if len(st.words) == 0 {
			continue
		}
		if isFunctionDefinition(st.words) {
			// Only a trap would call it (on a signal, which no run
			// simulates): skip its body.
			for depth := 0; i < len(stmts); i++ {
				depth += strings.Count(strings.Join(stmts[i].words, " "), "{") - strings.Count(strings.Join(stmts[i].words, " "), "}")
				if depth <= 0 {
					break
				}
			}
			continue
		}
		switch st.words[0] {
		case "while", "until", "for", "if":
			// A block: up to its closing keyword.
			closing := map[string]string{"while": "done", "until": "done", "for": "done", "if": "fi"}[st.words[0]]
			j, depth := i, 0
			for ; j < len(stmts); j++ {
				for _, w := range stmts[j].words {
					switch w {
					case "while", "until", "for", "if":
						depth++
					case "done", "fi":
						depth--
					}
				}
				if depth == 0 {
					break
				}
			}
			block := stmts[i:min(j+1, len(stmts))]
			sh.block(block, closing)
			i = j
			continue
		}
		if skip != "" {
			if (skip == "&&") == (sh.status == 0) {
				skip = ""
			}
			if st.join == "&&" || st.join == "||" {
				skip = st.join
			}
			continue
		}
		if st.join == "|" {
			continue // only the last command of a pipeline counts
		}
		if st.join == "&" {
			continue // in the background: the script does not wait for it
		}
		if !sh.builtin(st.words) {
			sh.status = 0 // another program: done at once
		}
		if (st.join == "&&" && sh.status != 0) || (st.join == "||" && sh.status == 0) {
			skip = st.join
		}
	}
}

// isFunctionDefinition reports whether words open a shell function:
// "name() {", "name () {" or "function name {".
func isFunctionDefinition(words []string) bool {
	switch {
	case words[0] == "function":
		return true
	case strings.HasSuffix(words[0], "()"):
		return true
	}
	return len(words) > 1 && words[1] == "()"
}

// block runs a loop or an if: a loop whose condition stays true runs
// forever once its body has run; a for loop runs its body once per word;
// an if runs its then or its else branch.
func (sh *shell) block(stmts []statement, closing string) {
	head := stmts[0].words
	var branches [2][]statement // the body (an if's then branch), an if's else branch
	branch, depth := 0, 0
	for _, st := range stmts[1:] {
		words := st.words
		if len(words) > 0 && depth == 0 {
			switch words[0] {
			case "else":
				branch = 1
				words = words[1:]
			case "do", "then":
				words = words[1:]
			}
		}
		for _, w := range words {
			switch w {
			case "while", "until", "for", "if":
				depth++
			case "done", "fi":
				depth--
			}
		}
		if depth < 0 && len(words) > 0 { // the block's end
			if words[len(words)-1] == closing {
				words = words[:len(words)-1]
			} else if words[0] == closing {
				words = words[1:]
			}
		}
		if len(words) > 0 {
			branches[branch] = append(branches[branch], statement{words: words, join: st.join})
		}
	}
	body := branches[0]
	switch head[0] {
	case "for":
		for _, v := range forWords(head) {
			sh.env[head[1]] = v
			sh.run(body)
		}
	case "if":
		sh.builtin(head[1:])
		if sh.status == 0 {
			sh.run(body)
		} else {
			sh.run(branches[1])
		}
	default: // while, until
		sh.run(body)
		if sh.exited < 0 {
			sh.prog.forever = true
		}
	}
}

// forWords are the words a "for NAME in ..." loop goes through.
func forWords(head []string) []string {
	if len(head) > 2 && head[2] == "in" {
		return head[3:]
	}
	return nil
}

// builtin runs a command kubeplay understands and reports whether it did.
func (sh *shell) builtin(words []string) bool {
	words = slices.Clone(words)
	for i, w := range words {
		words[i] = os.Expand(w, sh.lookup)
	}
	words, toFile, redirected := redirection(words)
	if redirected && toFile != "/dev/null" {
		sh.change(toFile, true)
	}
	if len(words) == 0 {
		return true
	}
	print := func(text string) {
		switch {
		case redirected && toFile == sh.messagePath:
			sh.prog.message += text
		case !redirected:
			sh.prog.output = append(sh.prog.output, printed{at: sh.elapsed, text: text})
		}
	}
	switch path.Base(words[0]) {
	case "exit":
		sh.exited = sh.status
		if len(words) > 1 {
			sh.exited, _ = strconv.Atoi(words[1])
		}
	case "true", ":", "cd", "export", "set", "trap", "date", "hostname":
		sh.status = 0
	case "touch", "mkdir", "rm":
		for _, a := range words[1:] {
			if !strings.HasPrefix(a, "-") {
				sh.change(a, words[0] != "rm")
			}
		}
		sh.status = 0
	case "test", "[", "[[":
		args := words[1:]
		if n := len(args); n > 0 && (args[n-1] == "]" || args[n-1] == "]]") {
			args = args[:n-1]
		}
		sh.status = 1
		if sh.test(args) {
			sh.status = 0
		}
	case "cat", "ls":
		sh.status = 0
		for _, a := range words[1:] {
			if strings.HasPrefix(a, "-") || !sh.missing(a) {
				continue
			}
			sh.status = 1
			switch path.Base(words[0]) {
			case "cat":
				print("cat: can't open '" + a + "': No such file or directory\n")
			case "ls":
				print("ls: " + a + ": No such file or directory\n")
			}
		}
	case "false":
		sh.status = 1
	case "echo":
		args, newline := words[1:], "\n"
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e") {
			if args[0] == "-n" {
				newline = ""
			}
			args = args[1:]
		}
		print(strings.Join(args, " ") + newline)
		sh.status = 0
	case "printf":
		if len(words) > 1 {
			text := words[1]
			for _, a := range words[2:] {
				text = strings.Replace(text, "%s", a, 1)
			}
			print(strings.ReplaceAll(text, `\n`, "\n"))
		}
		sh.status = 0
	case "sleep":
		if len(words) < 2 || words[1] == "infinity" {
			sh.prog.forever = true
			return true
		}
		d, ok := sleepDuration(words[1])
		if !ok {
			sh.status = 1
			return true
		}
		sh.elapsed += d
		sh.status = 0
	case "tail":
		if slices.Contains(words, "-f") || slices.Contains(words, "-F") {
			sh.prog.forever = true
		}
		sh.status = 0
	case "exec":
		if !sh.builtin(words[1:]) {
			sh.prog.forever = true
		} else {
			sh.exited = sh.status
		}
	case "sh", "bash", "ash":
		return false
	default:
		return false
	}
	return true
}

// lookup is the value of the variable name (${name:-default} reads name).
func (sh *shell) lookup(name string) string {
	name, _, _ = strings.Cut(name, ":")
	return sh.env[name]
}

// substitute is the output of a command substitution, $(command): the
// integer arithmetic of expr ("expr $I % 2"); any other command's output
// is not simulated, and is empty.
func (sh *shell) substitute(command string) string {
	words := strings.Fields(os.Expand(command, sh.lookup))
	if len(words) != 4 || words[0] != "expr" {
		return ""
	}
	a, errA := strconv.Atoi(words[1])
	b, errB := strconv.Atoi(words[3])
	if errA != nil || errB != nil {
		return ""
	}
	switch words[2] {
	case "+":
		return strconv.Itoa(a + b)
	case "-":
		return strconv.Itoa(a - b)
	case "*":
		return strconv.Itoa(a * b)
	case "/", "%":
		if b == 0 {
			return ""
		}
		if words[2] == "/" {
			return strconv.Itoa(a / b)
		}
		return strconv.Itoa(a % b)
	}
	return ""
}

// test evaluates the expression of test, [ or [[: a comparison of
// integers or strings, a string's emptiness, a file's presence (as the
// files the shell finds say); another expression is true when no file it
// names is missing.
func (sh *shell) test(args []string) bool {
	if len(args) > 0 && args[0] == "!" {
		return !sh.test(args[1:])
	}
	switch len(args) {
	case 1:
		return args[0] != ""
	case 2:
		switch args[0] {
		case "-z":
			return args[1] == ""
		case "-n":
			return args[1] != ""
		case "-e", "-f", "-d", "-r", "-s", "-x", "-w":
			return !sh.missing(args[1])
		}
	case 3:
		switch args[1] {
		case "=", "==":
			return args[0] == args[2]
		case "!=":
			return args[0] != args[2]
		}
		a, errA := strconv.Atoi(args[0])
		b, errB := strconv.Atoi(args[2])
		if errA == nil && errB == nil {
			switch args[1] {
			case "-eq":
				return a == b
			case "-ne":
				return a != b
			case "-lt":
				return a < b
			case "-le":
				return a <= b
			case "-gt":
				return a > b
			case "-ge":
				return a >= b
			}
		}
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && sh.missing(a) {
			return false
		}
	}
	return true
}

// change records a file created or removed by the program now.
func (sh *shell) change(path string, exists bool) {
	sh.prog.files = append(sh.prog.files, fileChange{at: sh.elapsed, path: path, exists: exists})
}

// missing reports whether an exec probe finds that the container has no
// file at path: one it removed, or one it creates later.
func (sh *shell) missing(path string) bool {
	if sh.files == nil {
		return false
	}
	exists, known := sh.files(path)
	return known && !exists
}

// redirection drops a command's redirections from words: where its
// standard output goes if it is redirected to a file.
func redirection(words []string) (rest []string, file string, redirected bool) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == ">" || w == ">>" || w == "&>":
			if i+1 < len(words) {
				file = words[i+1]
				redirected = file != "/dev/stdout" && file != "/dev/stderr"
				i++
			}
		case w == ">&" || w == "<" || strings.HasSuffix(w, ">&") || w == "2>" || w == "2>>":
			i++ // stderr to stdout, or an input: the output stays
		case strings.HasPrefix(w, ">&"), w == "2>&1", w == "1>&2":
		default:
			rest = append(rest, w)
		}
	}
	return rest, file, redirected
}

// sleepDuration reads sleep's argument: seconds, or a number with a unit
// (s, m, h, d).
func sleepDuration(arg string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(arg, "s"):
		arg = strings.TrimSuffix(arg, "s")
	case strings.HasSuffix(arg, "m"):
		arg, unit = strings.TrimSuffix(arg, "m"), time.Minute
	case strings.HasSuffix(arg, "h"):
		arg, unit = strings.TrimSuffix(arg, "h"), time.Hour
	case strings.HasSuffix(arg, "d"):
		arg, unit = strings.TrimSuffix(arg, "d"), 24*time.Hour
	}
	f, err := strconv.ParseFloat(arg, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// logOf is what the program has printed after running for d.
func (p program) logOf(d time.Duration) string {
	var b strings.Builder
	for _, l := range p.output {
		if l.at <= d {
			b.WriteString(l.text)
		}
	}
	return b.String()
}

// containerLog is what a simulated container of pod has printed by now on
// the sandbox's clock, or in its previous run: the kubelets' answer to
// pods/log (see server.Options.ContainerLog).
func containerLog(now func() time.Time) func(pod map[string]any, container string, previous bool) string {
	return func(pod map[string]any, container string, previous bool) string {
		p := jsonmap.Object(pod)
		var spec map[string]any
		for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
			for _, c := range jsonmap.Items(jsonmap.Child(p, "spec")[list]) {
				if c["name"] == container {
					spec = c
				}
			}
		}
		var status map[string]any
		for _, list := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
			for _, c := range jsonmap.Items(jsonmap.Child(p, "status")[list]) {
				if c["name"] == container {
					status = c
				}
			}
		}
		if spec == nil || status == nil {
			return ""
		}
		prog := programOf(p, spec)
		if previous {
			return prog.logOf(prog.runs)
		}
		state := jsonmap.Child(status, "state")
		switch {
		case state["running"] != nil:
			return prog.logOf(now().Sub(parseTime(jsonmap.String(state, "running", "startedAt"))))
		case state["terminated"] != nil:
			return prog.logOf(prog.runs)
		}
		return prog.logOf(prog.runs) // waiting to restart: its last run's
	}
}
