// Command genctl is the operator's tool: it creates accounts and API keys,
// grants credits and revokes keys in the service's store. Locally it works
// on the data directory of `make run` (GEN_DATA_DIR, default .gen), and
// may run while the server does.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "genctl:", err)
		os.Exit(1)
	}
}
