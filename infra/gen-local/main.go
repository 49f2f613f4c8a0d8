// Command gen-local runs the whole gen service on this machine, with no
// cloud account: `make run` starts it. See package devstack.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/trace"
	"syscall"

	"github.com/genvideo/gen/shared/devstack"
)

// envTrace names a file gen-local writes a runtime trace of its whole
// life to (go tool trace reads it): opt-in, for finding what makes the
// latency tail (infra/docs/performance.md). A trace costs a few percent
// of the CPU and grows by megabytes a second under load.
const envTrace = "GEN_TRACE"

func main() {
	devstack.TuneRuntime(os.LookupEnv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	endTrace, err := startTrace(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-local:", err)
		os.Exit(2)
	}
	code := run(ctx, os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	if err := endTrace(); err != nil {
		fmt.Fprintln(os.Stderr, "gen-local:", err)
	}
	os.Exit(code)
}

// startTrace starts the runtime trace GEN_TRACE asks for, if any; end
// stops it and closes its file.
func startTrace(lookup func(string) (string, bool)) (end func() error, err error) {
	path, ok := lookup(envTrace)
	if !ok || path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envTrace, err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", envTrace, err)
	}
	return func() error {
		trace.Stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", envTrace, err)
		}
		return nil
	}, nil
}

// run serves until ctx ends, configured through lookup, and returns the
// exit status: 2 for a bad configuration, 1 when the service failed.
func run(ctx context.Context, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	cfg, err := devstack.ParseConfig(lookup)
	if err != nil {
		fmt.Fprintln(stderr, "gen-local:", err)
		return 2
	}
	var closeLog func() error
	cfg.Logger, closeLog = devstack.NewLogger(stderr, cfg.LogLevel)
	err = devstack.Serve(ctx, cfg, stdout)
	closeLog() // the log's last lines before the verdict
	if err != nil {
		fmt.Fprintln(stderr, "gen-local:", err)
		return 1
	}
	return 0
}
