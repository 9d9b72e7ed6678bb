//go:build !js

package static_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEngineLink links the browser's engine as build.sh does and reads the
// linker's reachability graph (-ldflags=-dumpdep) for what makes it larger
// for nothing:
//   - a function that looks methods up by reflection under names the linker
//     cannot see (<ReflectMethod>): from then on the linker keeps every
//     exported method of every type that is ever in an interface, 10 MB of
//     wasm. With Go 1.26 a lookup by a constant name "Methods" does it too,
//     through reflect's own Methods iterator (golang/go#78909), which
//     protobuf before v1.36.12 made;
//   - net/http's client (the console serves itself in process), which would
//     bring its network transport and 2 MB.
func TestEngineLink(t *testing.T) {
	if testing.Short() {
		t.Skip("links the engine")
	}
	cmd := exec.Command("go", "build", "-trimpath", "-gcflags=all=-l", "-ldflags=-dumpdep", "-o", os.DevNull, "./wasm")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var graph bytes.Buffer
	cmd.Stderr = &graph
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%.2000s", err, graph.String())
	}
	edges, reflective := 0, ""
	for line := range strings.Lines(graph.String()) {
		from, to, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " -> ")
		if !ok {
			continue
		}
		edges++
		if strings.HasSuffix(to, "<ReflectMethod>") && reflective == "" {
			reflective = from + " -> " + to
			t.Errorf("%s: a reflective method lookup keeps every exported method", reflective)
		}
		if to == "net/http.(*Client).do" {
			t.Errorf("%s -> %s: the engine links net/http's client", from, to)
		}
	}
	if edges == 0 {
		t.Fatal("the linker printed no reachability graph")
	}
}
