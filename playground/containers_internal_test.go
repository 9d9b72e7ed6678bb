package playground

import (
	"encoding/json"
	"testing"
	"time"

	"kubeplay/internal/jsonmap"
)

func TestProgramOf(t *testing.T) {
	pod := jsonmap.Object{"metadata": map[string]any{"name": "web-1"}}
	for _, tc := range []struct {
		name           string
		container      string
		forever        bool
		runs           time.Duration
		exit           int
		log, message   string
		ignoresSIGTERM bool
	}{
		{name: "a server", container: `{"image":"nginx"}`, forever: true},
		{name: "busybox alone", container: `{"image":"busybox"}`, ignoresSIGTERM: true},
		{name: "true", container: `{"image":"busybox","command":["true"]}`},
		{name: "false", container: `{"image":"busybox","command":["/bin/false"]}`, exit: 1},
		{name: "sleep", container: `{"image":"busybox","command":["sleep","3600"]}`, runs: time.Hour, ignoresSIGTERM: true},
		{name: "args of a shell image", container: `{"image":"alpine:3.20","args":["sleep","10"]}`, runs: 10 * time.Second, ignoresSIGTERM: true},
		{name: "exit code", container: `{"image":"busybox","command":["sh","-c","exit 3"]}`, exit: 3, ignoresSIGTERM: true},
		{name: "a chain", container: `{"image":"busybox","command":["/bin/sh","-c","echo hello $HOSTNAME; sleep 2 && echo \"done: ${GREETING}\"; exit 0"],"env":[{"name":"GREETING","value":"hi"}]}`,
			runs: 2 * time.Second, log: "hello web-1\ndone: hi\n", ignoresSIGTERM: true},
		{name: "or", container: `{"image":"busybox","command":["sh","-c","false || echo fallback; false && echo never"]}`, exit: 1, log: "fallback\n", ignoresSIGTERM: true},
		{name: "a loop", container: `{"image":"busybox","command":["sh","-c","while true; do echo tick; sleep 5; done"]}`, forever: true, log: "tick\n", ignoresSIGTERM: true},
		{name: "if then", container: `{"image":"busybox","command":["sh","-c","if true; then echo yes; else echo no; fi; echo after"]}`, log: "yes\nafter\n", ignoresSIGTERM: true},
		{name: "if else", container: `{"image":"busybox","command":["sh","-c","if false\nthen\n  echo yes\nelse\n  echo no\n  if true; then echo nested; fi\nfi"]}`, log: "no\nnested\n", ignoresSIGTERM: true},
		{name: "odd index fails", container: `{"image":"busybox","command":["sh","-c"],"args":["\n\t\t\tif [ $(expr ${JOB_COMPLETION_INDEX} % 2) -ne 0 ]; then\n\t\t\t\texit 1\n\t\t\telse\n\t\t\t\texit 0\n\t\t\tfi\n\t\t\t"],"env":[{"name":"JOB_COMPLETION_INDEX","value":"3"}]}`,
			exit: 1, ignoresSIGTERM: true},
		{name: "even index succeeds", container: `{"image":"busybox","command":["sh","-c"],"args":["if [ $(expr ${JOB_COMPLETION_INDEX} % 2) -ne 0 ]; then exit 1; else exit 0; fi"],"env":[{"name":"JOB_COMPLETION_INDEX","value":"4"}]}`,
			ignoresSIGTERM: true},
		{name: "string test", container: `{"image":"busybox","command":["sh","-c","[ \"$A\" = b ] && echo same; [ -z \"$A\" ] || echo set; test 2 -gt 3 || exit 4"],"env":[{"name":"A","value":"b"}]}`,
			log: "same\nset\n", exit: 4, ignoresSIGTERM: true},
		{name: "for", container: `{"image":"busybox","command":["sh","-c","for i in 1 2; do echo $i; done"]}`, log: "1\n2\n", ignoresSIGTERM: true},
		{name: "termination message", container: `{"image":"busybox","command":["/bin/sh","-c","echo -n DONE > /dev/termination-custom-log; /bin/false"],"terminationMessagePath":"/dev/termination-custom-log"}`,
			exit: 1, message: "DONE", ignoresSIGTERM: true},
		{name: "unknown in a script", container: `{"image":"busybox","command":["sh","-c","wget -q example.com; echo ok"]}`, log: "ok\n", ignoresSIGTERM: true},
		{name: "exec'd server", container: `{"image":"python","command":["sh","-c","exec python -m http.server"]}`, forever: true, ignoresSIGTERM: true},
		{name: "agnhost", container: `{"image":"registry.k8s.io/e2e-test-images/agnhost:2.53","args":["pause"]}`, forever: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c jsonmap.Object
			if err := json.Unmarshal([]byte(tc.container), &c); err != nil {
				t.Fatal(err)
			}
			p := programOf(pod, c)
			if p.forever != tc.forever || !p.forever && (p.runs != tc.runs || p.exitCode != tc.exit) {
				t.Errorf("forever %v runs %v exit %d, want %v %v %d", p.forever, p.runs, p.exitCode, tc.forever, tc.runs, tc.exit)
			}
			if log := p.logOf(time.Hour); log != tc.log {
				t.Errorf("log %q, want %q", log, tc.log)
			}
			if p.message != tc.message || p.ignoresTerm != tc.ignoresSIGTERM {
				t.Errorf("message %q ignoresTerm %v, want %q %v", p.message, p.ignoresTerm, tc.message, tc.ignoresSIGTERM)
			}
		})
	}
}

// A shell function's body runs only when called (here: by a trap, on a
// signal no run simulates).
func TestProgramOf_functionDefinitionSkipped(t *testing.T) {
	script := "\n_term() {\n\trm -f /tmp/ready\n\tsleep 30\n\texit 0\n}\ntrap _term SIGTERM\n\ntouch /tmp/ready\n\nwhile true; do\n  echo hello\n  sleep 10\ndone\n"
	prog := programOf(jsonmap.Object{}, jsonmap.Object{"image": "agnhost", "command": []any{"/bin/bash"}, "args": []any{"-c", script}})
	if !prog.forever {
		t.Errorf("the script ends after %s with %d", prog.runs, prog.exitCode)
	}
	if exists, known := prog.fileAt("/tmp/ready", time.Hour); !exists || !known {
		t.Errorf("/tmp/ready: exists %v, known %v", exists, known)
	}
}

// A container whose mounts hold a host directory finds in it the files
// other pods left there: a Job's pod leaves a marker for its replacement.
func TestProgramFinding_hostDirectory(t *testing.T) {
	pod := jsonmap.Object{"metadata": map[string]any{"name": "job-0"}}
	script := "if [[ -r /data/marker ]]\nthen\n  exit 0\nelse\n  touch /data/marker\n  sleep 1000000\nfi"
	c := jsonmap.Object{"image": "busybox", "command": []any{"/bin/sh", "-c", script}}
	for _, left := range []bool{false, true} {
		p := programFinding(pod, c, func(path string) (bool, bool) { return left && path == "/data/marker", true })
		switch {
		case left && (p.runs != 0 || p.exitCode != 0):
			t.Errorf("marker left: runs %v exit %d, want an exit 0 at once", p.runs, p.exitCode)
		case !left && p.runs != 1000000*time.Second:
			t.Errorf("no marker: runs %v, want the sleep", p.runs)
		case !left:
			if exists, _ := p.fileAt("/data/marker", 0); !exists {
				t.Error("no marker made")
			}
		}
	}
}
