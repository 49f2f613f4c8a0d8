package httpguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveGuarded runs a guarded server of h on a loopback port until the
// test ends and returns its address.
func serveGuarded(t *testing.T, h http.Handler, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(h, cfg)
	go s.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return ln.Addr().String()
}

// answers writes raw on a new connection and reads the answers until the
// server closes it; a bound of 20 s keeps a broken test from hanging.
func answers(t *testing.T, addr, raw string) (statuses []int, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return statuses, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
	}
}

func TestBodies(t *testing.T) {
	var cut error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/read":
			if _, err := io.ReadAll(r.Body); err != nil {
				cut = err
				http.Error(w, "cut", http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, "read")
		case "/refuse":
			http.Error(w, "no", http.StatusUnauthorized)
		default:
			fmt.Fprint(w, "ignored the body")
		}
	})
	addr := serveGuarded(t, h, Config{Timeouts: Timeouts{BodyIdle: 200 * time.Millisecond, Body: time.Second}})
	for _, tt := range []struct {
		name, raw string
		want      []int
		closed    bool
	}{
		{"a stalled body is cut", "POST /read HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nhalf", []int{400}, true},
		{"a stalled chunked body is cut", "POST /read HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf\r\n", []int{400}, true},
		{"a refusal goes out before the body", "POST /refuse HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf\r\n", []int{401}, true},
		{"a body read whole keeps the connection", "POST /read HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nwholGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", []int{200, 200}, true},
		{"a body left unread but sent keeps it too", "POST /ignore HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nwholGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", []int{200, 200}, true},
		{"a body left unread and stalled closes it", "POST /ignore HTTP/1.1\r\nHost: h\r\nContent-Length: 40\r\n\r\nwhol", []int{200}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, closed := answers(t, addr, tt.raw)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || closed != tt.closed {
				t.Errorf("answers %v, closed %v; want %v, closed %v", got, closed, tt.want, tt.closed)
			}
		})
	}
	if !errors.Is(cut, ErrBodyTimeout) {
		t.Errorf("a cut body reads as %v, want ErrBodyTimeout", cut)
	}
}

// TestTrickleIsCut: a body that keeps coming, slowly, is cut at the body
// timeout.
func TestTrickleIsCut(t *testing.T) {
	addr := serveGuarded(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}), Config{Timeouts: Timeouts{BodyIdle: time.Second, Body: 500 * time.Millisecond}})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), ErrBodyTimeout.Error()) {
		t.Errorf("answer %d %q, want the handler's 400 on ErrBodyTimeout", res.StatusCode, b)
	}
}
