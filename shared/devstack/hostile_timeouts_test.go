package devstack

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRefusalIsAnsweredBeforeTheBody (item 6): a request the service
// refuses whatever its body (no key, a bad key, an unknown route, a
// wrong method) is answered at once, although its body never comes, and
// the connection is closed rather than held to read the rest.
func TestRefusalIsAnsweredBeforeTheBody(t *testing.T) {
	s := serve(t, "", nil)
	for _, tt := range []struct {
		name, line, key string
		status          int
		code            string
	}{
		{"no key", "POST /api/gen/image-to-video", "", 401, "UNAUTHORIZED"},
		{"an invalid key", "POST /api/gen/first-last-frame", "gen_" + strings.Repeat("x", 43), 401, "UNAUTHORIZED"},
		{"a malformed key", "POST /api/gen/text-to-video", "nope", 401, "UNAUTHORIZED"},
		{"an unknown route", "POST /api/gen/video", "", 404, "NOT_FOUND"},
		{"a wrong method", "PUT /api/gen/text-to-video", "", 405, "METHOD_NOT_ALLOWED"},
		{"a download link", "POST /files/videos/x/0.mp4", "", 405, "METHOD_NOT_ALLOWED"},
	} {
		for _, framing := range []string{"Content-Length: 20971520", "Transfer-Encoding: chunked"} {
			t.Run(tt.name+"/"+strings.Fields(framing)[0], func(t *testing.T) {
				head := fmt.Sprintf("%s HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=b\r\n%s\r\n", tt.line, s.addr, framing)
				if tt.key != "" {
					head += "X-API-Key: " + tt.key + "\r\n"
				}
				// The first bytes of a 20 MiB upload, and then nothing.
				part := "--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n\x1a\n"
				if strings.HasPrefix(framing, "Transfer") {
					part = fmt.Sprintf("%x\r\n%s\r\n", len(part), part)
				}
				conn, err := net.Dial("tcp", s.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := io.WriteString(conn, head+"\r\n"+part); err != nil {
					t.Fatal(err)
				}
				x := readExchange(conn, false, nil)
				if len(x.responses) != 1 {
					t.Fatalf("%d responses, want 1: %v", len(x.responses), x.err)
				}
				contractError(t, x.responses[0], tt.status, tt.code)
				if !x.closed {
					t.Errorf("the connection was held open (%v), want it closed", x.err)
				}
			})
		}
	}
}

// TestStalledBodyIsCut (item 6): a body that stops arriving is cut once
// nothing came for the body's idle timeout, and one that trickles in is
// cut at the body timeout; either is answered and its connection closed.
// The timeouts are set short here; make run's are BodyIdle 1 minute and
// Body 30 minutes.
func TestStalledBodyIsCut(t *testing.T) {
	s := serve(t, "", func(c *Config) {
		c.Timeouts.BodyIdle = 300 * time.Millisecond
		c.Timeouts.Body = 2 * time.Second
	})
	k := s.key(10000)
	before := s.books(k.AccountID)
	for _, tt := range []struct {
		name    string
		path    string
		ct      string
		first   string
		trickle bool
	}{
		{"a JSON body that stops", "/api/gen/text-to-video", "application/json", `{"prompt":"x",`, false},
		{"an upload that stops", "/api/gen/image-to-video", "multipart/form-data; boundary=b",
			"--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n\x1a\n", false},
		{"an upload that trickles", "/api/gen/image-to-video", "multipart/form-data; boundary=b",
			"--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n\x1a\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: %s\r\nContent-Length: 1000000\r\n\r\n%s",
				tt.path, s.addr, k.APIKey, tt.ct, tt.first)
			stop := make(chan struct{})
			defer close(stop)
			if tt.trickle {
				// A byte well within the idle timeout, for ever.
				go func() {
					tick := time.NewTicker(50 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							if _, err := conn.Write([]byte{0}); err != nil {
								return
							}
						}
					}
				}()
			}
			x := readExchange(conn, false, nil)
			if len(x.responses) != 1 {
				t.Fatalf("%d responses, want 1: the body was never cut (%v)", len(x.responses), x.err)
			}
			contractError(t, x.responses[0], http.StatusBadRequest, "VALIDATION_ERROR")
			if !x.closed {
				t.Errorf("the connection stayed open (%v), want it closed", x.err)
			}
		})
	}
	if after := s.books(k.AccountID); after != before {
		t.Errorf("books %+v, want %+v", after, before)
	}
}

// TestStalledHeadIsCut: a head that stops arriving, on a new connection
// and on a kept-alive one after a first request, and a connection kept
// alive with nothing more sent, are each closed by the server.
func TestStalledHeadIsCut(t *testing.T) {
	s := serve(t, "", func(c *Config) {
		c.Timeouts.Header = 300 * time.Millisecond
		c.Timeouts.Idle = 500 * time.Millisecond
	})
	models := fmt.Sprintf("GET /api/gen/models HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\n\r\n", s.addr, s.devKey)
	partial := "GET /api/gen/models HTTP/1.1\r\nHost: " + s.addr + "\r\nX-Api"
	for _, tt := range []struct {
		name, first, then string
		responses         int
	}{
		{"a head that stops", partial, "", 0},
		{"a second head that stops", models, partial, 1},
		{"a kept-alive connection left idle", models, "", 1},
		{"a head sent a byte at a time", "", "GET /api/gen/models HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: b\r\n", 100), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, tt.first)
			done := make(chan struct{})
			defer close(done)
			go func() {
				for i := 0; i < len(tt.then); i++ {
					select {
					case <-done:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := conn.Write([]byte{tt.then[i]}); err != nil {
						return
					}
				}
			}()
			x := readExchange(conn, false, nil)
			if len(x.responses) != tt.responses || !x.closed {
				t.Errorf("%d responses, closed %v (%v); want %d and the connection closed", len(x.responses), x.closed, x.err, tt.responses)
			}
		})
	}
}
