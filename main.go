// Command kubeplay serves a Kubernetes API playground: the API, its web UI
// and the in-browser (WebAssembly) version, on one port. Its commands are
// package app.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kubeplay/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, app.CommandLine(os.Args), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubeplay:", err)
		os.Exit(1)
	}
}
