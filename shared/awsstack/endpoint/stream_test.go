package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// A streamed answer is API Gateway's streaming format: a JSON prelude
// with the status and headers as the handler set them when it first
// wrote, eight NUL bytes, then the body; what the handler writes reaches
// the reader before the handler returns.
func TestStream(t *testing.T) {
	step := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"success":false}`)
		case "/silent":
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Add("Set-Cookie", "a=1")
			io.WriteString(w, "event: pending\n\n")
			w.Header().Set("X-Late", "not sent") // after the status: not in the prelude
			<-step
			io.WriteString(w, "event: completed\n\n")
		}
	})
	for _, tc := range []struct {
		path    string
		status  int
		ctype   string
		body    string
		stepped bool
	}{
		{"/api/gen/status/gen_1/events", 200, "text/event-stream", "event: pending\n\nevent: completed\n\n", true},
		{"/missing", 404, "application/json", `{"success":false}`, false},
		{"/silent", 200, "", "", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := streamHandler(h)(t.Context(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			buf := make([]byte, 4096)
			if tc.stepped {
				// Read up to the first event before letting the handler go on.
				for !bytes.Contains(got, []byte("event: pending\n\n")) {
					n, err := resp.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						t.Fatalf("read %q: %v before the first event", got, err)
					}
				}
				close(step)
			}
			rest, err := io.ReadAll(resp)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rest...)
			prelude, body, ok := bytes.Cut(got, make([]byte, 8))
			var p struct {
				StatusCode int                 `json:"statusCode"`
				Headers    map[string][]string `json:"multiValueHeaders"`
			}
			if err := json.Unmarshal(prelude, &p); !ok || err != nil {
				t.Fatalf("answer %q: no prelude and eight NUL bytes (%v)", got, err)
			}
			if p.StatusCode != tc.status || strings.Join(p.Headers["Content-Type"], ",") != tc.ctype || string(body) != tc.body || p.Headers["X-Late"] != nil {
				t.Errorf("prelude %+v body %q; want %d %q %q", p, body, tc.status, tc.ctype, tc.body)
			}
			if tc.stepped && strings.Join(p.Headers["Set-Cookie"], ",") != "a=1" {
				t.Errorf("Set-Cookie %q, want a=1", p.Headers["Set-Cookie"])
			}
		})
	}
}

// When the runtime closes a streamed body before its end (its post to the
// Runtime API ended: the client left), the handler's context ends and its
// next write fails, so it stops rather than run to its bound.
func TestStreamStopsWhenTheBodyIsClosed(t *testing.T) {
	ended := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: pending\n\n")
		<-r.Context().Done() // the context ends first...
		_, err := io.WriteString(w, "event: later\n\n")
		ended <- fmt.Sprint(err) // ...then the write fails
	})
	resp, err := streamHandler(h)(t.Context(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/api/gen/status/gen_1/events"})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if _, err := resp.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := resp.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ended:
		if got == "<nil>" {
			t.Error("a write after the body was closed succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler still runs 5 s after its body was closed")
	}
}
