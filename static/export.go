package static

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Export writes the browser mode into dir (created if missing) as a static
// site: plain files that any static host serves, the page at index.html.
// Files already there are overwritten; others are left alone. The
// precompressed copies (.br, .gz) go along, for hosts that send them (nginx's
// gzip_static, Caddy's precompressed); hosts that do not still work, sending
// more bytes. It fails when the browser build (dist/) is missing.
func Export(dir string) error {
	if _, err := fs.Stat(files, "dist/kubeplay.wasm"); err != nil {
		return errors.New("static: the browser build is missing (static/dist): run static/build.sh, or go tool task site")
	}
	return fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("static: %w", err)
		}
		return nil
	})
}
