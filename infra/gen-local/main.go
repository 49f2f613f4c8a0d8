// Command gen-local runs the whole gen service on this machine, with no
// cloud account: `make run` starts it. See package devstack.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/genvideo/gen/shared/devstack"
)

func main() {
	devstack.TuneRuntime(os.LookupEnv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
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
