package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
)

// Path is where the service serves MCP over Streamable HTTP.
const Path = "/mcp"

// internalBase is the base URL of the REST API the remote tools call
// in-process: no request to it leaves the process.
const internalBase = "http://gen.internal"

// maxRequestBytes bounds an MCP request: the two frames of a
// first-last-frame start in base64, each up to the contract's 20 MiB,
// and the rest. (On AWS, API Gateway and Lambda cap a request lower.)
const maxRequestBytes = 2*(MaxImageBytes/3*4+4) + 1<<20

// Keys authenticates the caller of a request: *service.Service is one.
type Keys interface {
	// CheckKey reports whether key is a live key; false for a missing,
	// malformed, unknown or revoked one, and an error when it cannot be
	// told (the store is down).
	CheckKey(ctx context.Context, key string) (bool, error)
}

// HTTPConfig is what the remote MCP endpoint serves over.
type HTTPConfig struct {
	// API is the service's REST API, which the tools call in-process
	// with the caller's key, so that each call is validated, limited,
	// charged and logged as the REST API's request it is.
	API http.Handler
	// Keys authenticates every MCP request before any message in it is
	// read.
	Keys Keys
	// Options configure the tools.
	Options Options
	// Logger receives the SDK's logs (default slog.Default()).
	Logger *slog.Logger
}

// NewHandler serves MCP over Streamable HTTP, statelessly: each POST is
// a whole exchange (the tools keep nothing between requests), so any
// process or Lambda container may answer any request. The caller's gen
// API key comes as a bearer token (Authorization: Bearer <key>); a
// request without a live key is answered 401 with a Bearer challenge
// before any message is read. GET (a stream of the server's own
// messages, which a stateless server has none of) and DELETE (a session
// to end, of which there is none) are answered 405, as the Streamable
// HTTP transport allows.
func NewHandler(cfg HTTPConfig) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	opts := cfg.Options
	if opts.Logger == nil {
		opts.Logger = cfg.Logger
	}
	internal := &http.Client{Transport: handlerTransport{cfg.API}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
				r.Method+" is not allowed on "+Path+": this MCP server is stateless and takes POST alone (no stream of its own, no session).")
			return
		}
		auth := r.Header.Values("Authorization")
		if len(auth) == 0 || auth[0] == "" {
			// RFC 6750 3.1: a request without credentials gets the
			// challenge without an error code.
			w.Header().Set("WWW-Authenticate", ChallengeMissing)
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "API key missing or invalid")
			return
		}
		// Another scheme, or several headers, is a key that is not a live
		// one, as the AWS authorizer judges it.
		key, ok := bearer(auth[0])
		if !ok || len(auth) > 1 {
			key = ""
		}
		live, err := cfg.Keys.CheckKey(r.Context(), key)
		if err != nil {
			cfg.Logger.ErrorContext(r.Context(), "mcp: authenticate", "err", err)
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "The service is temporarily unavailable; nothing was charged. Please retry.")
			return
		}
		if !live {
			w.Header().Set("WWW-Authenticate", ChallengeInvalid)
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "Invalid API key")
			return
		}
		// Images go in the start's own request: in-process there is no
		// request size to keep under.
		api, err := client.New(internalBase, key, append(ClientOptions(),
			client.WithHTTPClient(internal), client.WithDirectUploadAbove(-1))...)
		if err != nil {
			cfg.Logger.ErrorContext(r.Context(), "mcp: client", "err", err)
			writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "An internal error occurred.")
			return
		}
		// A wait stops polling when its caller leaves.
		server := newServer(api, opts, r.Context())
		jw := &jsonErrors{ResponseWriter: w}
		defer jw.finish()
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
			Stateless: true,
			Logger:    quiet(cfg.Logger),
			// The protection against DNS rebinding guards servers that
			// trust whoever reaches them on loopback; this one trusts only
			// a key, which a page rebinding a name to it cannot know.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        maxRequestBytes,
		}).ServeHTTP(jw, r)
	})
}

// The WWW-Authenticate challenges of a 401 (RFC 6750 3): gen's API keys
// are bearer tokens that the operator issues, not OAuth access tokens,
// so no resource_metadata is named (infra/docs/mcp.md, "Authorization").
// template.yaml's gateway responses send the same.
const (
	ChallengeMissing = `Bearer realm="gen"`
	ChallengeInvalid = `Bearer realm="gen", error="invalid_token", error_description="Invalid API key"`
)

// bearer is the token of an Authorization: Bearer header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// writeError answers the contract's error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"success": false, "error": code, "message": message})
}

// jsonErrors turns the transport's refusals, which the SDK answers in
// plain text (a body that is not JSON-RPC, a wrong Content-Type or
// Accept, a body over the bound), into the contract's JSON error body,
// as every other answer of the service is. Everything else passes
// through as it is written.
type jsonErrors struct {
	http.ResponseWriter
	status int // of a refusal being held
	text   bytes.Buffer
}

func (j *jsonErrors) WriteHeader(status int) {
	if j.status == 0 && status >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.status = status
		return
	}
	j.ResponseWriter.WriteHeader(status)
}

func (j *jsonErrors) Write(b []byte) (int, error) {
	if j.status != 0 {
		return j.text.Write(b)
	}
	return j.ResponseWriter.Write(b)
}

// Flush sends what was written (the events of a stream) at once.
func (j *jsonErrors) Flush() {
	if f, ok := j.ResponseWriter.(http.Flusher); ok && j.status == 0 {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// finish writes a refusal held back.
func (j *jsonErrors) finish() {
	if j.status == 0 {
		return
	}
	code := "VALIDATION_ERROR"
	switch {
	case j.status == http.StatusRequestEntityTooLarge:
		code = "FILE_TOO_LARGE"
	case j.status == http.StatusMethodNotAllowed:
		code = "METHOD_NOT_ALLOWED"
	case j.status == http.StatusNotFound:
		code = "NOT_FOUND"
	case j.status >= 500:
		code = "INTERNAL_ERROR"
	}
	j.Header().Del("X-Content-Type-Options")
	writeError(j.ResponseWriter, j.status, code, strings.TrimSpace(j.text.String()))
}

// handlerTransport serves a request with a handler in this process: the
// REST API's, which the remote tools' client calls.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	defer r.Body.Close()
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0" // the MCP request's own process
	r.Host = req.URL.Host
	rec := &recorder{header: http.Header{}}
	t.h.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)), StatusCode: rec.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// recorder is the http.ResponseWriter of an in-process request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		r.header = r.header.Clone() // later changes are not sent
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

func (r *recorder) Flush() {}
