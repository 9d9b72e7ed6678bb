#!/bin/sh
# Measures the browser mode's budgets (README, "Measurements"): the bytes a
# first visit downloads (brotli, gzip, uncompressed), navigation -> first
# answered request in headless Chromium on localhost (cold: fresh browser
# context; warm: reload; revisit: a new tab, with what the browser kept), and
# requests per second through kubeplay.fetch against the native server over
# HTTP, for ConfigMap creates and gets.
# Needs static/dist built (static/build.sh) and Chromium. Run from anywhere.
set -eu
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'Download' -benchtime 3x ./static/
go test -run '^$' -bench 'FirstAnswer' -benchtime "${VISITS:-5}x" ./static/
go test -run '^$' -bench 'Requests' -benchtime "${REQUESTS:-300}x" ./static/
