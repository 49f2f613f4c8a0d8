package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/wire"
)

// headerAPIKey carries the caller's key. Its value is never logged.
const headerAPIKey = "X-API-Key"

// canonicalAPIKey is headerAPIKey as net/http keys it in a request's
// Header (http.CanonicalHeaderKey).
const canonicalAPIKey = "X-Api-Key"

// headerAuthorization carries the key as a bearer token on the routes
// of openaiDialect (openai.go), and only there.
const headerAuthorization = "Authorization"

// handlerFunc serves an authenticated request that passed the rate limit.
// It returns an error only before it has written anything; the error is
// answered through toError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *service.Caller) error

// requestLog is what the request log line says beyond method and path.
type requestLog struct {
	accountID string
	keyID     string
}

// noteTask puts the task id into the request log line of the request w
// answers: a start's line then ties the request (and on AWS its
// requestId) to the execution named after the task. It goes on the
// recorder every endpoint already has, so that no request pays for it.
func noteTask(w http.ResponseWriter, id string) {
	if rec, ok := w.(*recorder); ok {
		rec.taskID = id
	}
}

// serve serves the methods of endpoint r, each through endpoint; another
// method is a 405 allowing them all, which needs no key.
func (a *API) serve(r Endpoint) http.Handler {
	d := r.speaks()
	if len(r.methods) == 1 {
		return a.endpoint(r.methods[0], d)
	}
	var allow []string
	handlers := make([]http.Handler, len(r.methods))
	for i, rt := range r.methods {
		handlers[i] = a.endpoint(rt, d)
		allow = append(allow, rt.method)
		if rt.method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for i, rt := range r.methods {
			if req.Method == rt.method || rt.method == http.MethodGet && req.Method == http.MethodHead {
				handlers[i].ServeHTTP(w, req)
				return
			}
		}
		rec := &recorder{ResponseWriter: w}
		defer finish(a.log, rec, req, time.Now(), &requestLog{})
		d.writeError(rec, &Error{Status: http.StatusMethodNotAllowed, Code: wire.CodeMethodNotAllowed,
			Allow:   strings.Join(allow, ", "),
			Message: fmt.Sprintf("%s is not allowed on %s; use %s.", req.Method, req.URL.Path, strings.Join(allow, " or "))})
	})
}

// endpoint wraps a handler with everything every endpoint does, in order:
// recovery and the request log, the method check (405, no key needed),
// authentication (401), the request rate limit (429), then the handler;
// d says how the key comes and how errors are written.
func (a *API) endpoint(rt method, d dialect) http.Handler {
	allow := rt.method
	if rt.method == http.MethodGet {
		allow = "GET, HEAD"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		var rl requestLog
		defer finish(a.log, rec, r, time.Now(), &rl)

		setPathValues(r, rt.pattern)
		if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
			d.writeError(rec, &Error{Status: http.StatusMethodNotAllowed, Code: wire.CodeMethodNotAllowed, Allow: allow,
				Message: fmt.Sprintf("%s is not allowed on %s; use %s.", r.Method, r.URL.Path, rt.method)})
			return
		}
		now := a.svc.Now()
		c, err := d.authenticate(a, r, now)
		if err != nil {
			a.fail(rec, r, err, now, d)
			return
		}
		rl.accountID, rl.keyID = c.Key.AccountID, c.Key.ID
		if err := a.countRequest(rec, r, &c); err != nil {
			a.fail(rec, r, err, now, d)
			return
		}
		if err := rt.serve(a, rec, r, &c); err != nil {
			a.fail(rec, r, err, now, d)
		}
	})
}

// unrouted wraps a handler that needs no key (the 404 of an unknown route,
// the public documents) with recovery and the request log.
func unrouted(log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		defer finish(log, rec, r, time.Now(), &requestLog{})
		h.ServeHTTP(rec, r)
	})
}

// notFoundRoute answers a path that is no endpoint of the API.
func notFoundRoute(w http.ResponseWriter, r *http.Request) {
	WriteError(w, &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
		Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
}

// canonicalPaths answers a request whose path is not in canonical form
// (a dot segment, a repeated slash) as an unknown route. ServeMux would
// redirect it to the cleaned path with an HTML body, and every answer of
// the API is the contract's JSON; clients send canonical paths anyway.
func canonicalPaths(log *slog.Logger, mux http.Handler) http.Handler {
	notFound := unrouted(log, http.HandlerFunc(notFoundRoute))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The path as sent, not decoded: an escaped slash inside a task id
		// (..%2f..) is part of that segment, not a dot segment, and must
		// reach the handler to be answered TASK_NOT_FOUND like any id.
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && cleanPath(p) != p {
			notFound.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is p as ServeMux cleans it before routing: rooted, without dot
// segments or repeated slashes, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// authenticate finds the caller by the X-API-Key header. No header, or
// an empty one, is a missing key; two of them an invalid one.
func (a *API) authenticate(r *http.Request, now time.Time) (service.Caller, error) {
	// By its canonical name: Values would canonicalize X-API-Key into a
	// new string on every request.
	vals := r.Header[canonicalAPIKey]
	switch {
	case len(vals) == 0:
		return service.Caller{}, service.ErrKeyMissing
	case len(vals) > 1:
		return service.Caller{}, service.ErrKeyInvalid
	}
	return a.svc.Authenticate(r.Context(), vals[0], now)
}

// authenticateBearer finds the caller of a request on the OpenAI-shaped
// paths by its Authorization: Bearer header (what the OpenAI SDKs send),
// with the rules of authenticate: none is a missing key, two of them or
// another scheme an invalid one.
func (a *API) authenticateBearer(r *http.Request, now time.Time) (service.Caller, error) {
	vals := r.Header.Values(headerAuthorization)
	switch {
	case len(vals) == 0 || vals[0] == "":
		return service.Caller{}, service.ErrKeyMissing
	case len(vals) > 1:
		return service.Caller{}, service.ErrKeyInvalid
	}
	scheme, key, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return service.Caller{}, service.ErrKeyInvalid
	}
	return a.svc.Authenticate(r.Context(), strings.TrimSpace(key), now)
}

// countRequest counts the request in the key's windows and sets the
// X-RateLimit-* headers of the minute window, which every response after
// authentication carries, a 429 included.
func (a *API) countRequest(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	q, err := a.svc.CountRequest(r.Context(), *c)
	c.Requests = q
	var limit *domain.LimitError
	if err != nil && !errors.As(err, &limit) {
		return err
	}
	// Set by their canonical names, which net/http writes anyway:
	// Header.Set would canonicalize X-RateLimit-* into a new string on
	// every request.
	h := w.Header()
	h["X-Ratelimit-Limit"] = []string{strconv.Itoa(q.Minute.Limit)}
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(q.Minute.Remaining)}
	h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(q.Minute.Reset.Unix(), 10)}
	return err
}

// fail answers err through the error table, written as d writes errors,
// and logs what the client is not told: the cause of every 5xx.
func (a *API) fail(w *recorder, r *http.Request, err error, now time.Time, d dialect) {
	e := toError(err, now)
	if e.Status >= 500 {
		a.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", e.Status), slog.String("error", err.Error()))
	}
	if w.wrote {
		return // too late for an error response; the log has it
	}
	d.writeError(w, e)
}

// finish recovers a panic into a 500 and writes the request log line.
func finish(log *slog.Logger, w *recorder, r *http.Request, start time.Time, rl *requestLog) {
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			panic(p)
		}
		log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
		if !w.wrote {
			WriteError(w, toError(fmt.Errorf("panic: %v", p), time.Now()))
		}
	}
	status := w.status
	if !w.wrote {
		status = http.StatusOK
	}
	// A read that succeeded (a poll, a page of history) is logged at
	// debug: it changed nothing, and at thousands a second its line was
	// a tenth of a poll's CPU. Every write, and every answer that is an
	// error, is logged at info.
	level := slog.LevelInfo
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && status < http.StatusBadRequest {
		level = slog.LevelDebug
	}
	if !log.Enabled(r.Context(), level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", time.Since(start)),
		slog.String("account", rl.accountID),
		slog.String("key", rl.keyID),
	}
	if w.taskID != "" {
		attrs = append(attrs, slog.String("task", w.taskID))
	}
	log.LogAttrs(r.Context(), level, "request", attrs...)
}

// recorder notes the status a handler wrote, for the log and so that an
// error after the first byte is not written twice.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	taskID string // noteTask's
}

func (w *recorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setPathValues gives r the wildcards of pattern ({webhookId}, ...) that
// the router would have set, for an endpoint served outside it (one per
// Lambda, behind API Gateway's own routing): the segments of the path
// where the pattern has wildcards. A path of another shape sets nothing.
func setPathValues(r *http.Request, pattern string) {
	if !strings.Contains(pattern, "{") {
		return
	}
	want, got := strings.Trim(pattern, "/"), strings.Trim(r.URL.Path, "/")
	if strings.Count(want, "/") != strings.Count(got, "/") {
		return
	}
	// Segment by segment with Cut, not Split: every request passes here.
	segments := func(set bool) bool {
		for w, g := want, got; ; {
			ws, wrest, more := strings.Cut(w, "/")
			gs, grest, _ := strings.Cut(g, "/")
			name, wild := strings.CutPrefix(ws, "{")
			switch {
			case !wild && ws != gs:
				return false
			case wild && set:
				if name = strings.TrimSuffix(name, "}"); r.PathValue(name) == "" {
					r.SetPathValue(name, gs)
				}
			}
			if !more {
				return true
			}
			w, g = wrest, grest
		}
	}
	if segments(false) {
		segments(true)
	}
}
