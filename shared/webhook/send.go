package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Defaults of Sender.
const (
	// DefaultTimeout bounds one attempt, from dialling to the end of the
	// receiver's answer.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes is how much of a receiver's answer is read: enough
	// for an error message, never more.
	MaxResponseBytes = 4 << 10
)

// Sender posts deliveries. Its zero value is ready: https only, public
// addresses only, DefaultTimeout, no redirects followed.
type Sender struct {
	// AllowPrivate lets deliveries use plain http and reach any address
	// (GEN_WEBHOOK_ALLOW_PRIVATE, for local development only).
	AllowPrivate bool
	// Timeout bounds an attempt (default DefaultTimeout).
	Timeout time.Duration
	// Resolver resolves names (default net.DefaultResolver); the dialer
	// checks each address it connects to, whatever resolved it.
	Resolver *net.Resolver
	// Transport, when set, replaces the safe transport: for tests that
	// must reach a TLS server on loopback while checking everything else.
	Transport http.RoundTripper
}

// Result is what one attempt found.
type Result struct {
	// Status is the receiver's HTTP status, 0 when none came back.
	Status  int
	Latency time.Duration
	// Err says why the attempt failed: no answer, or a status other than
	// 2xx; nil for a delivery the receiver accepted.
	Err error
	// Body is the start of the receiver's answer, at most
	// MaxResponseBytes.
	Body []byte
}

// ErrForbiddenAddress is a connection refused because its address is
// private, loopback, link-local or reserved.
var ErrForbiddenAddress = errors.New("address not allowed for webhooks")

// control refuses a connection to a forbidden address: it runs after DNS
// resolution, for every address the dialer tries, so a name that
// resolves (or re-resolves) to an internal address is refused too.
func control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	// The runtime may hand an IPv4 destination over in its IPv4-mapped
	// form; the kernel then connects to the IPv4 address, which is what
	// is judged. (A URL naming the mapped form is refused by CheckURL.)
	if ip := ap.Addr().Unmap(); Forbidden(ip) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ip)
	}
	return nil
}

func (s *Sender) client() *http.Client {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rt := s.Transport
	if rt == nil {
		d := &net.Dialer{Timeout: timeout, Resolver: s.Resolver}
		if !s.AllowPrivate {
			d.Control = control
		}
		rt = &http.Transport{
			// No proxy: a proxy would make the connection, and the
			// address check, somewhere else.
			Proxy:                 nil,
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	return &http.Client{
		Transport: rt,
		Timeout:   timeout,
		// Redirects are not followed: a 3xx is an answer like any other
		// non-2xx, and the attempt failed. Following one would need the
		// address checks again and would post the event somewhere the
		// account never registered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Send posts body as JSON to url with the headers h and reports what
// came back. Only the scheme is checked here (CheckURL did the rest at
// registration); the dialer checks the address.
func (s *Sender) Send(ctx context.Context, url string, h http.Header, body []byte) Result {
	start := time.Now()
	res := s.send(ctx, url, h, body)
	res.Latency = time.Since(start)
	return res
}

func (s *Sender) send(ctx context.Context, url string, h http.Header, body []byte) Result {
	if len(url) < 8 || (url[:8] != "https://" && !(s.AllowPrivate && url[:7] == "http://")) {
		return Result{Err: errors.New("webhook URL must use https")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Result{Err: fmt.Errorf("build request: %w", err)}
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gen-webhooks/1")
	resp, err := s.client().Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close()
	// Read at most the cap, and never beyond: a receiver that streams
	// forever costs us MaxResponseBytes and the timeout.
	got, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	res := Result{Status: resp.StatusCode, Body: got}
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		res.Err = fmt.Errorf("receiver answered %d", resp.StatusCode)
	case readErr != nil:
		// The status was an acceptance; a body cut short does not undo it.
	}
	return res
}
