// Package client is a Go client of the gen video-generation API: typed
// requests and answers for the three start calls (the image ones upload
// a streamed multipart form), status, download, history (with an iterator
// over every page) and models; Wait, which polls a task until it ends;
// retries with jitter; and errors that carry the contract's error code
// (*Error, for errors.As). The requests and answers are the service's own
// types, shared/wire, under the names the client has always given them
// (Task is wire.Task): the client reads exactly what the service writes.
//
// Reads are retried on 429 and server errors. A start is retried only
// when it carries an Idempotency-Key (WithIdempotencyKey, or
// WithAutoIdempotency for every start), because the service then answers
// a repeated start with the first answer instead of starting and charging
// again.
package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// errDeadline is what a WaitTimeoutError unwraps to.
var errDeadline = context.DeadlineExceeded

// maxBody bounds an API answer; the largest (a history page of 100 tasks
// with 2,000-character prompts) is far below it.
const maxBody = 16 << 20

// Client calls the API. It is safe for concurrent use. Build it with New.
type Client struct {
	base      *url.URL
	key       string
	http      *http.Client
	retry     RetryPolicy
	userAgent string
	autoKey   bool
	now       func() time.Time
	// directAbove: images larger upload directly (WithDirectUploadAbove).
	directAbove int64
}

// RetryPolicy says how calls are retried. Reads are retried on 429 and on
// 5xx and network errors; starts only when they carry an Idempotency-Key.
type RetryPolicy struct {
	// MaxAttempts is the number of tries, the first included (default
	// 4; 1 disables retries).
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// tries (defaults 500ms and 8s). Each wait is jittered.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for
	// before a retry (default 1 minute); a 429 asking for longer (a
	// daily limit, say) is returned at once.
	MaxRetryAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.MinBackoff <= 0 {
		p.MinBackoff = 500 * time.Millisecond
	}
	if p.MaxBackoff < p.MinBackoff {
		p.MaxBackoff = max(8*time.Second, p.MinBackoff)
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = time.Minute
	}
	return p
}

// backoff is the jittered wait before try number attempt+1 (attempt >=
// 1): half of the exponential step, plus a random part of the other half,
// so that clients that failed together do not retry together.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.MinBackoff << min(attempt-1, 20)
	if d > p.MaxBackoff || d <= 0 {
		d = p.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with hc (default: a client without a
// timeout; bound calls with their context).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetry sets the retry policy; zero fields keep their defaults.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p.withDefaults() } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithAutoIdempotency gives every start that has no Idempotency-Key a
// fresh one, so that every start may be retried safely.
func WithAutoIdempotency() Option { return func(c *Client) { c.autoKey = true } }

// New returns a client of the service at baseURL (such as
// http://127.0.0.1:8080, or https://host/stage) that authenticates with
// apiKey.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("gen: base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("gen: base URL %q: want http(s)://host[:port][/path]", baseURL)
	}
	c := &Client{base: u, key: apiKey, http: &http.Client{}, retry: RetryPolicy{}.withDefaults(),
		userAgent: "gen-go-client/1", now: time.Now, directAbove: DefaultDirectUploadAbove}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// NewIdempotencyKey returns a fresh random Idempotency-Key.
func NewIdempotencyKey() string {
	var b [16]byte
	crand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}

// call is one API call, possibly sent several times.
type call struct {
	method, path string
	query        url.Values
	// body makes a fresh body for each try, with its Content-Type.
	body func() (io.ReadCloser, string, error)
	// idempotencyKey is sent as Idempotency-Key when set.
	idempotencyKey string
	// retry says whether the call may be sent again.
	retry bool
}

// do sends a call, retrying as its policy allows, and returns the answer
// of a 2xx; any other answer is an *Error.
func (c *Client) do(ctx context.Context, cl call) (*http.Response, []byte, error) {
	// cl.path is escaped (a task id is a path segment): keep it so.
	u := *c.base
	u.RawPath = c.base.EscapedPath() + cl.path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, nil, fmt.Errorf("gen: path %q: %w", cl.path, err)
	}
	u.Path = p
	if len(cl.query) > 0 {
		u.RawQuery = cl.query.Encode()
	}
	for attempt := 1; ; attempt++ {
		res, body, err := c.send(ctx, cl, u.String())
		if err == nil {
			return res, body, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		wait, again := c.retryWait(cl, attempt, err)
		if !again {
			return nil, nil, err
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
	}
}

// send makes one try.
func (c *Client) send(ctx context.Context, cl call, u string) (*http.Response, []byte, error) {
	var body io.ReadCloser
	var contentType string
	if cl.body != nil {
		var err error
		if body, contentType, err = cl.body(); err != nil {
			return nil, nil, &noRetry{err}
		}
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, nil, &noRetry{fmt.Errorf("gen: %s %s: %w", cl.method, cl.path, err)}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	if cl.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", cl.idempotencyKey)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("gen: %s %s: %w", cl.method, cl.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, nil, fmt.Errorf("gen: %s %s: read answer: %w", cl.method, cl.path, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, nil, parseError(res, b, c.now())
	}
	return res, b, nil
}

// noRetry marks a failure that happened before anything was sent.
type noRetry struct{ err error }

func (e *noRetry) Error() string { return e.err.Error() }
func (e *noRetry) Unwrap() error { return e.err }

// retryWait decides whether a failed try is tried again, and after how
// long.
func (c *Client) retryWait(cl call, attempt int, err error) (time.Duration, bool) {
	if !cl.retry || attempt >= c.retry.MaxAttempts {
		return 0, false
	}
	var nr *noRetry
	if errors.As(err, &nr) {
		return 0, false
	}
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		// A network error: the service may not have answered at all.
		return c.retry.backoff(attempt), true
	}
	switch {
	case apiErr.Status == http.StatusTooManyRequests:
		if apiErr.RetryAfter > c.retry.MaxRetryAfter {
			return 0, false
		}
		// The window ends at the same moment for every client it
		// stopped: spread their retries a little past it.
		return max(apiErr.RetryAfter, c.retry.MinBackoff) + rand.N(c.retry.MinBackoff+1), true
	case apiErr.Status >= 500 && apiErr.Status != http.StatusNotImplemented:
		return max(c.retry.backoff(attempt), min(apiErr.RetryAfter, c.retry.MaxRetryAfter)), true
	}
	return 0, false
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// getJSON sends a read and decodes its answer into v.
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, v any) (*http.Response, error) {
	res, body, err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, retry: true})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("gen: GET %s: decode answer: %w", path, err)
	}
	return res, nil
}

// jsonBody is a body maker for a JSON value.
func jsonBody(v any) (func() (io.ReadCloser, string, error), error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, string, error) {
		return io.NopCloser(bytes.NewReader(b)), "application/json", nil
	}, nil
}
