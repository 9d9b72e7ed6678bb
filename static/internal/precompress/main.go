// Command precompress writes gzip (.gz) and brotli (.br) copies of the
// browser-mode files next to them, so the native server can send the
// engine compressed (the wasm shrinks about eightfold) without compressing
// it on every request.
//
//	go run ./static/internal/precompress [-best] static/dist
//
// It compresses every file of the directory but the compressed copies and
// README.md.
//
// By default it compresses fast, for a build that is served from this
// machine (gzip and brotli at level 6: seconds instead of a minute, ~15 %
// more bytes). -best is for what ships to others: the exported site and the
// budgets measured in the README (gzip -9, brotli -q 11).
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/andybalholm/brotli"
)

func main() {
	best := flag.Bool("best", false, "compress at the highest levels (slow), for what ships")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: precompress [-best] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *best); err != nil {
		fmt.Fprintln(os.Stderr, "precompress:", err)
		os.Exit(1)
	}
}

func run(dir string, best bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && name != "README.md" && !strings.HasSuffix(name, ".br") && !strings.HasSuffix(name, ".gz") {
			files = append(files, filepath.Join(dir, name))
		}
	}
	gzipLevel, brotliQuality := 6, 6
	if best {
		// Quality 11 takes ~40 s on the wasm but sends 12% less than 9.
		gzipLevel, brotliQuality = gzip.BestCompression, 11
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		gz, err := compress(data, func(b *bytes.Buffer) writeCloser {
			w, _ := gzip.NewWriterLevel(b, gzipLevel)
			return w
		})
		if err != nil {
			return err
		}
		br, err := compress(data, func(b *bytes.Buffer) writeCloser {
			return brotli.NewWriterOptions(b, brotli.WriterOptions{Quality: brotliQuality, LGWin: 24})
		})
		if err != nil {
			return err
		}
		if err := os.WriteFile(name+".gz", gz, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(name+".br", br, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type writeCloser interface {
	Write([]byte) (int, error)
	Close() error
}

func compress(data []byte, newWriter func(*bytes.Buffer) writeCloser) ([]byte, error) {
	var b bytes.Buffer
	w := newWriter(&b)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
