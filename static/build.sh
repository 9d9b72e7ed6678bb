#!/bin/sh
# Builds static/dist, the browser-mode artifacts that package static embeds
# (see static/dist/README.md). Run from anywhere; needs Go and `npm ci` done at
# the repository root. Go flags may be added through GOFLAGS.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dist=$root/static/dist
sqlite=$root/node_modules/@sqlite.org/sqlite-wasm/dist

if [ ! -f "$sqlite/index.mjs" ] || [ ! -f "$sqlite/sqlite3.wasm" ]; then
	echo "static/build.sh: $sqlite not found: run 'npm ci' at the repository root" >&2
	exit 1
fi

find "$dist" -mindepth 1 ! -name README.md -exec rm -rf {} +
cd "$root"
# Without inlining (-l) the engine is 1.4 MB smaller brotli-compressed (8.0 ->
# 6.5 MB), a quarter faster to compile in the browser, and no slower to
# answer there (README, "Measurements").
GOOS=js GOARCH=wasm go build -trimpath -gcflags=all=-l -ldflags="-s -w" -o "$dist/kubeplay.wasm" ./wasm
# CEL apart: the worker loads it only when the engine first needs it (wasm/cel).
GOOS=js GOARCH=wasm go build -trimpath -gcflags=all=-l -ldflags="-s -w" -o "$dist/kubeplay-cel.wasm" ./wasm/cel
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$dist/wasm_exec.js"
# The database a new saved sandbox starts from (see static/internal/bootstrapdb).
go run ./static/internal/bootstrapdb "$dist/bootstrap.sqlite3"
# Minified: 657 -> 220 KB, 144 -> 59 KB brotli (the licence comments kept).
"$root/node_modules/.bin/esbuild" "$sqlite/index.mjs" --minify --format=esm --legal-comments=eof --log-level=warning --outfile="$dist/sqlite3.mjs"
cp "$sqlite/sqlite3.wasm" "$dist/sqlite3.wasm"
# The native server sends these copies to clients that accept them: made
# fast here, at the highest levels for what ships (go tool task site-assets:best).
go run ./static/internal/precompress "$dist"
