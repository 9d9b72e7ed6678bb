//go:build js && wasm

package main

import (
	"encoding/json"
	"log"
	"syscall/js"

	"kubeplay/playground"
	"kubeplay/server"
)

// The host (static/worker.js) keeps the sandbox's emulated release and
// feature gates across reloads, as playground.Emulation's JSON, beside the
// database it saves: it sets globalThis[emulationGlobal] to what it kept
// (undefined: nothing) and globalThis[saveEmulationHook] to a function(json)
// that keeps it (undefined: the sandbox is not saved).
const (
	emulationGlobal   = "__kubeplayEmulation"
	saveEmulationHook = "__kubeplaySaveEmulation"
)

// loadEmulation sets the release and gates of opts as the host kept them. A
// kept emulation this program cannot read (from a newer build, say) is
// logged and left out, rather than keeping the page from starting.
func loadEmulation(global js.Value, opts *playground.Options) {
	v := global.Get(emulationGlobal)
	if v.Type() != js.TypeString {
		return
	}
	var e playground.Emulation
	err := json.Unmarshal([]byte(v.String()), &e)
	if err == nil {
		err = e.Apply(opts)
	}
	if err != nil {
		log.Printf("kubeplay: ignoring the emulated release kept: %v", err)
	}
}

// keptSandbox is the page's sandbox, which hands its emulated release and
// feature gates to the host to keep whenever the UI switches them.
type keptSandbox struct {
	*playground.Sandbox
	save js.Value
}

func (s keptSandbox) SetVersion(minor int) error {
	err := s.Sandbox.SetVersion(minor)
	s.keep()
	return err
}

func (s keptSandbox) SetFeatureGates(fg server.FeatureGates) error {
	err := s.Sandbox.SetFeatureGates(fg)
	s.keep()
	return err
}

func (s keptSandbox) keep() {
	if s.save.Type() != js.TypeFunction {
		return
	}
	b, err := json.Marshal(playground.EmulationOf(s.Version(), s.SwitchedFeatureGates()))
	if err != nil {
		log.Printf("kubeplay: keeping the emulated release: %v", err)
		return
	}
	s.save.Invoke(string(b))
}
