package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// ErrBodyTimeout is what reading a request body returns (wrapped) once it
// was cut for arriving too slowly.
var ErrBodyTimeout = errors.New("the request body stopped arriving in time")

// guard answers the requests the connection refused, and serves the
// others through h with their bodies bounded in time.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _ := r.Context().Value(connKey{}).(*conn); c != nil && r.Header.Get(refusedHeader) != "" {
			if why := c.refused(); why != nil {
				w.Header().Set("Connection", "close")
				s.refuse(w, *why)
				return
			}
		}
		if r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		now := time.Now()
		b := &body{ReadCloser: r.Body, ctl: http.NewResponseController(w), idle: s.timeouts.BodyIdle, end: now.Add(s.timeouts.Body)}
		r = r.WithContext(r.Context())
		r.Body = b
		h.ServeHTTP(&closer{ResponseWriter: w, body: b}, r)
	})
}

// body is a request body whose every read must come within idle of the
// last, and the whole of it by end. The deadline is the connection's, set
// before each read and cleared at the end of the body, so that it never
// outlives the body.
type body struct {
	io.ReadCloser
	ctl  *http.ResponseController
	idle time.Duration
	end  time.Time
	eof  bool
	err  error // the first error, returned again: a cut body stays cut
}

func (b *body) Read(p []byte) (int, error) {
	if b.eof {
		// No new deadline: net/http reads the connection in the
		// background from here on, and one would cut that read.
		return 0, io.EOF
	}
	if b.err != nil {
		return 0, b.err
	}
	b.bound()
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
		b.ctl.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: %w", ErrBodyTimeout, err)
		b.err = err
	case err != nil:
		b.err = err
	}
	return n, err
}

// bound gives the next read of the body until the idle timeout, or the
// end of the body's time if that comes first.
func (b *body) bound() {
	deadline := time.Now().Add(b.idle)
	if deadline.After(b.end) {
		deadline = b.end
	}
	// ErrNotSupported (a connection without deadlines) leaves the body
	// unbounded, as net/http would.
	b.ctl.SetReadDeadline(deadline)
}

// closer sees to an answer written before the body was read to its end.
// net/http would read up to 256 KiB more of the body, before sending the
// answer and again after the handler, waiting for bytes that may never
// come. An error is answered at once and the connection closed (the rest
// of the body is not worth reading); any other answer waits for the rest
// at most as long as a read of the body may, and the connection is
// closed if it does not come.
type closer struct {
	http.ResponseWriter
	body  *body
	wrote bool
}

func (c *closer) WriteHeader(status int) {
	if !c.wrote && status >= 200 {
		c.wrote = true
		switch {
		case c.body.eof:
		case status >= 400:
			c.Header().Set("Connection", "close")
			// After the handler net/http reads the body on to close it;
			// make that read fail at once.
			c.body.ctl.SetReadDeadline(time.Now())
		default:
			c.body.bound()
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *closer) Write(p []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (c *closer) Unwrap() http.ResponseWriter { return c.ResponseWriter }
