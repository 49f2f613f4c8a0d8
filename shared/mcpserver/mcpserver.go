// Package mcpserver is gen's Model Context Protocol server: the tools an
// agent in an MCP host (Claude Desktop, VS Code, Cursor, ...) uses to
// list the models, quote and start a generation, follow it, cancel it,
// and read the history and the credits, built with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// The tools call the service's own HTTP API through the Go client
// (shared/client), never around it: every start is validated, limited,
// capped, charged and refunded as the REST API's is, and every refusal
// is the REST API's, handed to the agent as a tool error (isError) that
// names the contract's error code and field. The same tools serve both
// transports: `gen mcp` over stdio (the client calls the service over
// HTTP with the CLI's key and base URL), and /mcp on the service
// (Streamable HTTP, stateless; NewHandler), where the client calls the
// service's HTTP handler in-process with the key the caller sent as a
// bearer token. infra/docs/mcp.md is the reference.
package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/webhook"
)

// API is the gen API the tools call: *client.Client is one.
type API interface {
	Models(ctx context.Context) (*client.ModelList, error)
	QuoteTextToVideo(ctx context.Context, req client.Request) (*client.Quote, error)
	QuoteImageToVideo(ctx context.Context, req client.Request, image client.Image) (*client.Quote, error)
	QuoteFirstLastFrame(ctx context.Context, req client.Request, first, last client.Image) (*client.Quote, error)
	TextToVideo(ctx context.Context, req client.Request, opts ...client.StartOption) (*client.Started, error)
	ImageToVideo(ctx context.Context, req client.Request, image client.Image, opts ...client.StartOption) (*client.Started, error)
	FirstLastFrame(ctx context.Context, req client.Request, first, last client.Image, opts ...client.StartOption) (*client.Started, error)
	QuoteExtend(ctx context.Context, taskID string, req client.ExtendRequest) (*client.Quote, error)
	Extend(ctx context.Context, taskID string, req client.ExtendRequest, opts ...client.StartOption) (*client.Started, error)
	Status(ctx context.Context, taskID string) (*client.Task, error)
	Cancel(ctx context.Context, taskID string) (*client.Task, error)
	History(ctx context.Context, q client.HistoryQuery) (*client.HistoryPage, error)
	Credits(ctx context.Context, q client.CreditsQuery) (*client.Credits, error)
}

var _ API = (*client.Client)(nil)

// Fetcher gets an image a tool names by URL: *webhook.Sender is one,
// which fetches under the rules of a webhook delivery (public https
// addresses only, checked at every dial, no redirect followed).
type Fetcher interface {
	Fetch(ctx context.Context, url string, limit int64) (body []byte, contentType string, err error)
}

// URLFetcher is the Fetcher of images by URL: a webhook.Sender, which
// reaches public https addresses alone unless allowPrivate (plain http
// and private addresses too, for development on one machine).
func URLFetcher(allowPrivate bool) *webhook.Sender {
	return &webhook.Sender{AllowPrivate: allowPrivate, Timeout: fetchTimeout}
}

// Defaults of Options.
const (
	// DefaultMaxWait bounds wait_for_task: a host's own request timeout
	// is often a minute or so, and a wait may be asked again.
	DefaultMaxWait = 10 * time.Minute
	// DefaultWait is the wait of a wait_for_task that names none: under
	// the TypeScript SDK's default request timeout of 60 seconds.
	DefaultWait = 45 * time.Second
	// MaxImageBytes is the contract's bound of an image. An image fetched
	// by URL is read up to one byte more, so that the service refuses a
	// larger one with its own FILE_TOO_LARGE.
	MaxImageBytes = 20 << 20
	// fetchTimeout bounds the fetch of an image by URL.
	fetchTimeout = 30 * time.Second
)

// Options configure the tools.
type Options struct {
	// Fetcher gets images named by URL (default a webhook.Sender: public
	// https addresses only).
	Fetcher Fetcher
	// MaxWait bounds the wait of wait_for_task (default DefaultMaxWait).
	MaxWait time.Duration
	// MinPoll and MaxPoll bound the pause between two looks at a task
	// while waiting, when the service's Retry-After gives none (defaults
	// 1 s and 10 s); the service's hint is honoured above MinPoll.
	MinPoll, MaxPoll time.Duration
	// Version is the server's version in its MCP implementation info.
	Version string
	// Logger receives the server's logs (default slog.Default()).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Fetcher == nil {
		o.Fetcher = URLFetcher(false)
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.MinPoll <= 0 {
		o.MinPoll = time.Second
	}
	if o.MaxPoll < o.MinPoll {
		o.MaxPoll = max(10*time.Second, o.MinPoll)
	}
	if o.Version == "" {
		o.Version = "1"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// instructions tell the agent how the tools fit together.
const instructions = `gen makes short videos from a prompt, an image, or a first and a last frame, for credits.
Typical use: list_models (ids, limits, prices), optionally quote, then start_text_to_video,
start_image_to_video or start_first_last_frame, which return a taskId at once; then wait_for_task
(repeat while finished is false) or get_task. extend_video continues a completed task's video as a
new task, where the model's backend extends videos (limits.modes has video-extension). A completed task's task.videos[].url is a signed link
to the MP4, valid 24 hours; posterUrl is its first frame. A failed task is refunded. A refused call
is a tool error whose structured error names the contract's code (INSUFFICIENT_CREDITS,
VALIDATION_ERROR with its field, RATE_LIMIT_EXCEEDED with retryAfterSeconds, ...); nothing was charged.`

// New returns the MCP server of gen's tools over api.
func New(api API, opts Options) *mcp.Server { return newServer(api, opts, nil) }

// newServer is New, whose tool calls also end when lifetime does (nil:
// never): the HTTP request a stateless exchange is, which ends when its
// caller leaves, while the SDK runs the call on a context of its own.
func newServer(api API, opts Options, lifetime context.Context) *mcp.Server {
	opts = opts.withDefaults()
	s := mcp.NewServer(&mcp.Implementation{Name: "gen", Title: "gen video generation", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: quiet(opts.Logger)})
	t := &tools{api: api, opts: opts}
	for _, d := range t.definitions() {
		h := d.handler
		if lifetime != nil {
			h = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ctx, stop := context.WithCancel(ctx)
				defer stop()
				defer context.AfterFunc(lifetime, stop)()
				return d.handler(ctx, req)
			}
		}
		s.AddTool(d.tool, h)
	}
	return s
}

// ClientOptions are the options of the client the tools call the
// service with: it starts with an Idempotency-Key of its own, so that a
// start is retried safely, and hands a 429 back to the agent at once,
// with its retryAfterSeconds, rather than sleeping through it.
func ClientOptions() []client.Option {
	return []client.Option{
		client.WithUserAgent("gen-mcp/1"),
		client.WithAutoIdempotency(),
		client.WithRetry(client.RetryPolicy{MaxRetryAfter: time.Nanosecond}),
	}
}

// ServeStdio serves the tools over api on one connection: an MCP host's
// stdio, newline-delimited JSON-RPC read from in and written to out,
// until in ends or ctx is done. Nothing else may be written to out.
func ServeStdio(ctx context.Context, api API, opts Options, in io.ReadCloser, out io.WriteCloser) error {
	return New(api, opts).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: maxRequestBytes})
}

// quiet is l for the SDK, which logs every session's connection at Info:
// on the remote endpoint, every request's.
func quiet(l *slog.Logger) *slog.Logger { return slog.New(warnings{l.Handler()}) }

// warnings passes on the records of Warn and above.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && w.Handler.Enabled(ctx, level)
}

func (w warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{w.Handler.WithAttrs(attrs)}
}
func (w warnings) WithGroup(name string) slog.Handler { return warnings{w.Handler.WithGroup(name)} }
