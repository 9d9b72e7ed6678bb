//go:build !cgo && !js

package store

import (
	"database/sql"
	"errors"
	"fmt"
)

// No driver: a native build without cgo has no SQLite. This file only keeps
// the package (and everything that imports it for the Store interface)
// compiling, for instance when cross-compiling; Open fails.

var errNoDriver = errors.New("no SQLite driver in this build: build natively with CGO_ENABLED=1, or for js/wasm")

func openDB(string) (*sql.DB, error) { return nil, errNoDriver }

func translateErr(err error) error { return fmt.Errorf("store: %w", err) }
