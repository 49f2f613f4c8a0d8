// Command genctl is the operator's tool: it creates accounts and API keys,
// grants credits and revokes keys in the service's store. Locally it works
// on the data directory of `make run` (GEN_DATA_DIR, default .gen), and
// may run while the server does. With --aws (or GEN_BACKEND=aws) it works
// on a deployed stack: the DynamoDB tables of GEN_TABLE_PREFIX, through
// the same admin code and store as the Lambdas, and API Gateway, where it
// attaches every new key to its tier's usage plan and disables the
// usage-plan key of a revoked one.
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
