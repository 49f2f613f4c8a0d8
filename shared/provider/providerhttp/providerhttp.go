// Package providerhttp is what the adapters of video providers
// (shared/provider/veo, shared/provider/openai, shared/provider/omni) share of talking HTTP: the errors
// they classify answers into (each a provider.Classifier); a request
// that knows whether it went out whole; a download into a file; a
// redirect policy that keeps a key on its own origin; and the start-up
// check of the models a route maps ours to (CheckModels). What each
// provider's answers mean stays in its adapter.
package providerhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/genvideo/gen/shared/provider"
)

// BusyError is a refusal to wait out: a throttled or unavailable answer
// (429, 5xx), or no answer at all. Its RetryAfter makes the workflow
// wait and call again, within the task's deadline. Only answers to
// requests are: a job that failed is never submitted again.
type BusyError struct {
	Err error
	// After is the provider's hint of the wait, 0 without one.
	After time.Duration
	// Sent: the request went out whole and no readable answer came back
	// (a dropped connection, a timeout, a 504, a 2xx that does not
	// decode). A poll waits that out; a submit's outcome is then unknown
	// (SubmitOutcome).
	Sent bool
	// Operator: a wait only an operator can end (credentials refused
	// while a job runs); the workflow logs it as an error.
	Operator bool
}

func (e *BusyError) Error() string             { return e.Err.Error() }
func (e *BusyError) Unwrap() error             { return e.Err }
func (e *BusyError) RetryAfter() time.Duration { return e.After }
func (e *BusyError) NeedsOperator() bool       { return e.Operator }

// Classify: a wait, the provider's hint with it.
func (e *BusyError) Classify() provider.Answer {
	return provider.Answer{Class: provider.Busy, After: e.After, Operator: e.Operator}
}

// OutcomeUnknownError is a submit that went out whole with no readable
// answer: the provider may be running, and billing, the job, and a
// submit takes no idempotency key, so submitting again could make two.
// The workflow never submits such a job again.
type OutcomeUnknownError struct{ Err error }

func (e *OutcomeUnknownError) Error() string        { return "submit outcome unknown: " + e.Err.Error() }
func (e *OutcomeUnknownError) Unwrap() error        { return e.Err }
func (e *OutcomeUnknownError) OutcomeUnknown() bool { return true }

// Classify: the job may run, and bill; it is never submitted again.
func (e *OutcomeUnknownError) Classify() provider.Answer {
	return provider.Answer{Class: provider.OutcomeUnknown}
}

// SubmitOutcome is what a submit's error means: a request that went out
// whole with no readable answer (a Sent *BusyError) is an
// *OutcomeUnknownError; the rest is err.
func SubmitOutcome(err error) error {
	var busy *BusyError
	if errors.As(err, &busy) && busy.Sent {
		return &OutcomeUnknownError{Err: err}
	}
	return err
}

// Do sends req with c. No answer is a *BusyError named name (never the
// URL's query, where a key could be), Sent when the request had gone
// out whole: before, a failure (a refused connection, a DNS error)
// means the provider never saw it. A cancelled context's error is
// returned as it is.
func Do(c *http.Client, req *http.Request, name string) (*http.Response, error) {
	ctx := req.Context()
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	}))
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &BusyError{Err: fmt.Errorf("%s: %w", name, err), Sent: wrote.Load()}
	}
	return resp, nil
}

// SendJSON does one request of a JSON API: body, unless nil, encoded as
// JSON; a 2xx answer decoded into out, read to at most max bytes (an
// inline video rides in some answers); any other answer handed to
// answerErr, which reads the provider's own error shape. what names the
// request in errors, with no key in it. Network failures, and an answer
// that cannot be decoded, are *BusyError, sent when the request had gone
// out whole.
func SendJSON(ctx context.Context, c *http.Client, method, url, what string, header http.Header, body, out any,
	max int64, answerErr func(*http.Response) error) error {
	return Send(ctx, c, method, url, what, header, body, answerErr, func(r io.Reader) error {
		if err := json.NewDecoder(io.LimitReader(r, max)).Decode(out); err != nil {
			return &BusyError{Err: fmt.Errorf("decode answer of %s: %w", what, err), Sent: true}
		}
		return nil
	})
}

// Send is SendJSON with a 2xx answer's body handed to read, whose error
// is returned as it is: an answer too large to hold (inline videos) can
// be streamed where it goes.
func Send(ctx context.Context, c *http.Client, method, url, what string, header http.Header, body any,
	answerErr func(*http.Response) error, read func(io.Reader) error) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := Do(c, req, what)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerErr(resp)
	}
	return read(resp.Body)
}

// Busy is the *BusyError of an error answer the provider will take again
// later, 429 or 5xx, wrapping err: waited out after hint, the provider's
// own retry delay when it gives one, else the Retry-After header
// (seconds). A 504, a gateway that gave up waiting for the API, had
// passed the request on: what became of it is unknown (Sent). Any other
// status is nil: err stands as it is.
func Busy(resp *http.Response, err error, hint time.Duration) error {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return nil
	}
	if hint == 0 {
		secs, _ := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64)
		hint = time.Duration(secs * float64(time.Second))
	}
	return &BusyError{Err: err, After: hint, Sent: resp.StatusCode == http.StatusGatewayTimeout}
}

// RefusedWhileRunning is what a poll answered 401 or 403 becomes: the
// job the provider accepted runs, and bills, whatever the credentials
// now are, so it is waited out within the deadline and logged for the
// operator to renew them (a static token expires), rather than fail a
// paid job. The status is the adapter's error's (a StatusCode method,
// each adapter's Error); any other status, or none, leaves err as it is.
func RefusedWhileRunning(err error) error {
	var e interface{ StatusCode() int }
	if !errors.As(err, &e) {
		return err
	}
	if status := e.StatusCode(); status != http.StatusUnauthorized && status != http.StatusForbidden {
		return err
	}
	return &BusyError{Err: fmt.Errorf("credentials refused while a job runs (renew them): %w", err), Operator: true}
}

// Save writes at most max bytes of body to path. A body cut short is a
// *BusyError: the next poll downloads it again.
func Save(body io.Reader, path string, max int64, name string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = io.Copy(f, io.LimitReader(body, max))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &BusyError{Err: fmt.Errorf("download %s: %w", name, err)}
	}
	return nil
}

// KeepOnOrigin is a CheckRedirect that drops the headers named (a key)
// from a redirect to another origin than origin (scheme://host): Go's
// client copies every header of the first request to whatever host a
// redirect names, dropping only Authorization and cookies on another
// domain (net/http, Client.Do), and not even those on a sibling
// subdomain.
func KeepOnOrigin(origin string, headers ...string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Scheme+"://"+req.URL.Host != origin {
			for _, h := range headers {
				req.Header.Del(h)
			}
		}
		return nil
	}
}

// Endpoint is an adapter's base URL: raw without its trailing slashes,
// def when raw is empty, and its origin (scheme://host), which a key
// stays on (KeepOnOrigin). api names the adapter in the error of an
// endpoint that is not a URL.
func Endpoint(api, raw, def string) (endpoint, origin string, err error) {
	endpoint = strings.TrimRight(raw, "/")
	if endpoint == "" {
		endpoint = def
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("%s: endpoint %q is not a URL", api, endpoint)
	}
	return endpoint, u.Scheme + "://" + u.Host, nil
}

// Models are the distinct provider models of a model map (ours to the
// provider's), sorted; an empty id (a host's own model) is left out.
func Models(models map[string]string) []string {
	var out []string
	for _, m := range models {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// CheckModels is a start-up check of the provider models of a model
// map: get asks the API for one; an answer notFound reads as "not
// served" is noted and the check goes on; any other error ends it, as
// fail words it (the setting to fix). Models not served are a
// *provider.UnavailableModelsError of api once all were asked.
func CheckModels(api string, models map[string]string, get func(model string) error,
	notFound func(error) bool, fail func(model string, err error) error) error {
	var missing []string
	for _, m := range Models(models) {
		err := get(m)
		if err != nil && notFound(err) {
			missing = append(missing, m)
			continue
		}
		if err != nil {
			return fail(m, err)
		}
	}
	if len(missing) > 0 {
		return &provider.UnavailableModelsError{API: api, Models: missing}
	}
	return nil
}
