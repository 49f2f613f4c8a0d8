package webhook

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Fetch gets url, a resource a client named for the service to read (an
// image by URL, shared/mcpserver), under the rules of a delivery: the
// URL passes CheckURL (https, no credentials, a host that resolves only
// to public addresses, unless AllowPrivate), the dialer refuses every
// forbidden address it would connect to, no proxy is used, no redirect
// is followed, and Timeout bounds the whole exchange. It returns the
// body's first limit bytes at most, and the Content-Type the server
// declared: a caller that accepts n bytes passes n+1 to tell a longer
// body. An answer other than 200 is an error naming its status.
func (s *Sender) Fetch(ctx context.Context, url string, limit int64) (body []byte, contentType string, err error) {
	// CheckURL looks the name up first, so that a refusal says why; the
	// dialer checks again whatever the name resolves to when it
	// connects.
	var r Resolver
	if s.Resolver != nil {
		r = s.Resolver
	}
	if err := CheckURL(ctx, url, s.AllowPrivate, r); err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", "gen-fetch/1")
	resp, err := s.client().Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s answered %d", resp.Request.URL.Host, resp.StatusCode)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", resp.Request.URL.Host, err)
	}
	return body, resp.Header.Get("Content-Type"), nil
}
