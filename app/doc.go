// Package app is the kubeplay command: its subcommands (serve, run,
// kubeconfig, export-site) behind one Run, which main calls and tests can
// call too. It is native only: serve opens the cgo SQLite store and embeds
// the browser-mode files; what the browser engine shares with it, the
// site's assembly, is package website.
package app
