package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kubeplay/server"
	"kubeplay/server/releases"
)

// Emulation is what a sandbox remembers, across restarts, of the release it
// emulates: a managed sandbox kept in a file keeps it as JSON beside its
// database (sandbox-<id>.emulation.json), so that a restart reopens it as
// it was rather than with the server's defaults. A snapshot is the database
// alone and carries none of a sandbox's settings (no more than its
// retention or controllers): restoring one keeps the sandbox's.
type Emulation struct {
	EmulatedVersion string `json:"emulatedVersion"`
	// FeatureGates are the gates switched explicitly; the others keep
	// their defaults in the emulated release.
	FeatureGates server.FeatureGates `json:"featureGates,omitempty"`
}

// emulationPath is where the sandbox's emulation is kept.
func (ms *Managed) emulationPath() string {
	return filepath.Join(ms.m.opts.Dir, "sandbox-"+ms.id+".emulation.json")
}

// saveEmulationLocked writes the sandbox's emulation beside its database;
// a sandbox in memory, which a restart loses anyway, keeps none. It
// requires ms.mu.
func (ms *Managed) saveEmulationLocked() error {
	if ms.path == "" {
		return nil
	}
	version := ms.version
	if version == 0 {
		version = releases.Newest
	}
	b, err := json.Marshal(EmulationOf(version, ms.gates))
	if err != nil {
		return err
	}
	// Renamed into place, so that a crash never leaves half a file.
	tmp := ms.emulationPath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, ms.emulationPath())
}

// loadEmulation reads the sandbox's emulation, if it kept one (those
// created before sandboxes kept theirs have the manager's defaults).
func (ms *Managed) loadEmulation() error {
	b, err := os.ReadFile(ms.emulationPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var e Emulation
	if err := json.Unmarshal(b, &e); err != nil {
		return fmt.Errorf("%s: %w", ms.emulationPath(), err)
	}
	var opts Options
	if err := e.Apply(&opts); err != nil {
		return fmt.Errorf("%s: %w", ms.emulationPath(), err)
	}
	ms.version, ms.gates = opts.Version, opts.FeatureGates
	return nil
}

// EmulationOf is the emulation of release 1.minor with the gates switched.
func EmulationOf(minor int, gates server.FeatureGates) Emulation {
	return Emulation{EmulatedVersion: fmt.Sprintf("1.%d", minor), FeatureGates: gates}
}

// Apply sets the release and feature gates of opts as e says, checked.
func (e Emulation) Apply(opts *Options) error {
	minor, err := releases.Parse(e.EmulatedVersion)
	if err != nil {
		return err
	}
	var kv []string
	for name, on := range e.FeatureGates {
		kv = append(kv, fmt.Sprintf("%s=%t", name, on))
	}
	gates, err := server.ParseFeatureGates(strings.Join(kv, ","))
	if err != nil {
		return err
	}
	opts.Version, opts.FeatureGates = minor, gates
	return nil
}
