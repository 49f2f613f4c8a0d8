// Package openapitest checks, in tests, that what goes over the wire
// matches the service's OpenAPI document: Transport wraps an HTTP client's
// transport and reports every response (and, for clients, every request)
// that the document does not describe as a test error, and every answer
// that does not decode into its Go type (shared/wire for the contract)
// with no member left over. The Validator under
// it, and Doc, the document loaded by kin-openapi, are here rather than in
// package openapi so that only tests link kin-openapi.
package openapitest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

var validator = sync.OnceValues(NewValidator)

// Transport is an http.RoundTripper that sends through Base and checks
// each exchange with the API against the document. A response whose
// status the operation does not document, or whose headers or body do not
// match, is reported to TB with Errorf (so it is safe from any goroutine)
// and still handed to the caller. Requests to paths outside /api/ that the
// document does not list, such as signed download links, are not checked.
type Transport struct {
	TB testing.TB
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// CheckRequests also checks every request: for clients, whose
	// requests must all be valid, not for tests that send invalid ones on
	// purpose.
	CheckRequests bool
	// Prefix is the path the API is served under, if any (the AWS
	// assembly's stage, /v1): it is taken off each request's path before
	// the document, whose paths start at the root, is consulted.
	Prefix string
}

// Client returns an HTTP client whose every exchange with the API is
// checked against the document.
func Client(tb testing.TB) *http.Client {
	return &http.Client{Transport: &Transport{TB: tb}}
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip sends req and checks the exchange.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	v, err := validator()
	if err != nil {
		t.TB.Errorf("openapi: %v", err)
		return t.base().RoundTrip(req)
	}
	check := t.documented(req)
	if !v.Documents(check) && !strings.HasPrefix(check.URL.Path, "/api/") {
		return t.base().RoundTrip(req)
	}
	if t.CheckRequests {
		var body []byte
		if req.Body != nil {
			body, err = io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			// RoundTrip must not change the caller's request.
			req = req.Clone(req.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if err := v.ValidateRequest(req.Context(), check, body); err != nil {
			t.TB.Errorf("openapi: the request does not match the document: %v", err)
		}
	}
	res, err := t.base().RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	CheckResponse(t.TB, check, res.StatusCode, res.Header, body)
	return res, nil
}

// documented is req as the document sees it: its path without Prefix.
func (t *Transport) documented(req *http.Request) *http.Request {
	p := strings.TrimSuffix(t.Prefix, "/")
	rest, ok := strings.CutPrefix(req.URL.Path, p)
	if p == "" || !ok || !strings.HasPrefix(rest, "/") {
		return req
	}
	r := req.Clone(req.Context())
	r.URL.Path = rest
	if raw, ok := strings.CutPrefix(req.URL.RawPath, p); ok {
		r.URL.RawPath = raw
	}
	return r
}

// CloseIdleConnections closes Base's idle connections, for
// httptest.Server.Close.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// CheckResponse reports to tb a response to req that does not match the
// document, for tests that read responses without an http.Client; and
// one that does, but whose body does not decode into the Go type of its
// answer (shared/wire's, which the Go client reads) with every member
// known: the document and the types have drifted apart.
func CheckResponse(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	v, err := validator()
	if err != nil {
		tb.Errorf("openapi: %v", err)
		return
	}
	if err := v.ValidateResponse(req.Context(), req, status, header, body); err != nil {
		tb.Errorf("openapi: the response does not match the document: %v\nbody: %s", err, clip(body))
		return
	}
	if err := v.decodeAnswer(req, status, header, body); err != nil {
		tb.Errorf("openapi: the response does not decode into its Go type: %v\nbody: %s", err, clip(body))
	}
}

func clip(b []byte) []byte {
	if len(b) > 2000 {
		return append(b[:2000:2000], "..."...)
	}
	return b
}
