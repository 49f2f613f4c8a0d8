// Command gen is the command line of the gen video-generation API: it
// starts generations (showing their progress against the estimate) and
// downloads the videos, and shows a task's status, the history and the
// models; `gen mcp` serves its tools to an MCP host over stdio. The API
// key comes from GEN_API_KEY, the service's address from GEN_BASE_URL
// (default the local server, http://127.0.0.1:8080).
//
//	go install ./infra/gen
//	gen generate "a paper boat drifting on a pond at dawn" --model lite --duration 4
//
// Exit status: 0 on success, 1 on an error, 3 when generate stopped
// waiting (--wait-timeout) while the task goes on.
package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env := environment{
		getenv:        os.Getenv,
		stdin:         os.Stdin,
		stdout:        os.Stdout,
		stderr:        os.Stderr,
		stderrIsATerm: term.IsTerminal(int(os.Stderr.Fd())),
	}
	os.Exit(run(ctx, os.Args[1:], env))
}
