package main

import (
	"errors"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/mcpserver"
)

// mcpCmd serves gen's MCP tools over stdio, as an MCP host (Claude
// Desktop, VS Code, Cursor) starts a local server: the host writes
// JSON-RPC to stdin and reads it from stdout, and shows stderr as the
// server's log.
func mcpCmd(opts *options) *cobra.Command {
	var allowPrivate bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve gen's tools to an MCP host (Model Context Protocol over stdio)",
		Long: "Serve gen's tools to an MCP host over stdio: list_models, quote, start_text_to_video,\n" +
			"start_image_to_video, start_first_last_frame, extend_video, get_task, wait_for_task, cancel_task,\n" +
			"history and credits. Each calls the service at GEN_BASE_URL with GEN_API_KEY, as every\n" +
			"other command does. An MCP host starts it with the config block the README shows;\n" +
			"infra/docs/mcp.md describes the tools.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.key == "" {
				return errors.New("GEN_API_KEY is not set: give the key in the MCP server's env")
			}
			newClient := client.New
			if opts.env.newClient != nil {
				newClient = opts.env.newClient
			}
			api, err := newClient(opts.baseURL, opts.key, mcpserver.ClientOptions()...)
			if err != nil {
				return err
			}
			// stdout carries the protocol alone; warnings go to stderr,
			// which hosts keep as the server's log.
			logger := slog.New(slog.NewTextHandler(opts.env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			return mcpserver.ServeStdio(cmd.Context(), api, mcpserver.Options{
				Fetcher: mcpserver.URLFetcher(allowPrivate),
				Logger:  logger,
			}, io.NopCloser(opts.env.stdin), nopWriteCloser{opts.env.stdout})
		},
	}
	cmd.Flags().BoolVar(&allowPrivate, "allow-private-image-urls", false,
		"fetch images by plain http and from private addresses too (a server on this machine, for development)")
	return cmd
}

// nopWriteCloser is stdout, which the server does not close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
