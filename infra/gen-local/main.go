// Command gen-local runs the whole gen service on this machine, with no
// cloud account: `make run` starts it. See package devstack.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/genvideo/gen/shared/devstack"
)

func main() {
	cfg, err := devstack.ConfigFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-local:", err)
		os.Exit(2)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := devstack.Serve(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen-local:", err)
		os.Exit(1)
	}
}
