// Package httpguard serves HTTP/1.1 with net/http, hardened against
// clients that misuse the transport rather than the API:
//
//   - A request whose message framing two readers could read two ways
//     (Content-Length beside Transfer-Encoding, a transfer coding other
//     than chunked, two lengths, a folded header line, a bare LF, ...) is
//     refused with 400 before the server parses it, and its connection is
//     closed, so that nothing hidden in its body runs as another request
//     (RFC 9112, sections 6.1 and 11.2). net/http alone reads such a
//     request by Transfer-Encoding and keeps the connection open.
//   - A request body has to keep arriving: it is cut when nothing came for
//     Timeouts.BodyIdle, or when it is still coming after Timeouts.Body.
//   - A request answered with an error before its body was read (no key,
//     an unknown route) gets its answer at once and its connection is
//     closed; net/http would first try to read the rest of the body.
//
// Heads are bounded by Timeouts.Header and MaxHeaderBytes, idle kept-alive
// connections by Timeouts.Idle.
package httpguard

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Defaults of Config.
const (
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultBodyIdleTimeout = time.Minute
	// DefaultBodyTimeout lets a 20 MiB upload arrive at 90 kbit/s.
	DefaultBodyTimeout    = 30 * time.Minute
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxHeaderBytes = 64 << 10
)

// Timeouts bound how long a client may take. A zero field takes its
// default.
type Timeouts struct {
	// Header bounds the time to read a request's head (request line and
	// headers) once its first bytes arrived.
	Header time.Duration
	// BodyIdle cuts a request body of which nothing arrived for this long.
	BodyIdle time.Duration
	// Body cuts a request body still arriving this long after its head.
	Body time.Duration
	// Idle closes a kept-alive connection on which no request starts for
	// this long.
	Idle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.Header, DefaultHeaderTimeout}, {&t.BodyIdle, DefaultBodyIdleTimeout}, {&t.Body, DefaultBodyTimeout}, {&t.Idle, DefaultIdleTimeout}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return t
}

// Refusal says why a request was refused before the handler saw it.
type Refusal struct {
	// Header names the header at fault, or is empty when the request line
	// or the head as a whole is.
	Header string
	// Message is a sentence for the client.
	Message string
}

// Config is what a Server is built from. Every field is optional.
type Config struct {
	Timeouts Timeouts
	// MaxHeaderBytes bounds a request's head (DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// Refuse writes the answer to a request refused for its framing, a
	// 400; the connection is closed after it. Nil writes a plain-text
	// answer.
	Refuse func(w http.ResponseWriter, why Refusal)
}

// Server is an http.Server with the guards on. Build it with NewServer.
type Server struct {
	srv      *http.Server
	maxHead  int
	timeouts Timeouts
	refuse   func(w http.ResponseWriter, why Refusal)
}

// NewServer returns a server of h.
func NewServer(h http.Handler, cfg Config) *Server {
	s := &Server{maxHead: cfg.MaxHeaderBytes, timeouts: cfg.Timeouts.withDefaults(), refuse: cfg.Refuse}
	if s.maxHead <= 0 {
		s.maxHead = DefaultMaxHeaderBytes
	}
	if s.refuse == nil {
		s.refuse = func(w http.ResponseWriter, why Refusal) { http.Error(w, why.Message, http.StatusBadRequest) }
	}
	s.srv = &http.Server{
		Handler:           s.guard(h),
		ReadHeaderTimeout: s.timeouts.Header,
		IdleTimeout:       s.timeouts.Idle,
		MaxHeaderBytes:    s.maxHead,
		// OPTIONS * goes to h like any other request, so that h answers
		// it as it answers everything.
		DisableGeneralOptionsHandler: true,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if fc, ok := c.(*conn); ok {
				ctx = context.WithValue(ctx, connKey{}, fc)
			}
			return ctx
		},
	}
	return s
}

// Serve accepts connections on ln until Shutdown; it returns
// http.ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	return s.srv.Serve(&listener{Listener: ln, maxHead: s.maxHead})
}

// Shutdown stops accepting connections and waits, until ctx ends, for
// those serving a request to finish.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// connKey finds a request's connection in its context.
type connKey struct{}
