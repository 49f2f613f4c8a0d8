package gateway

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
)

// streamFn is a Lambda at the boundary invoked with a streamed response:
// its answer is what the test writes to the pipe.
type streamFn struct {
	fn
	stream func() lambdaruntime.Result
}

func (f *streamFn) InvokeStream(context.Context, string, []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error) {
	return f.stream(), nil, false, nil
}

// streamed are the template's functions whose integrations stream: the
// event stream's and MCP's.
var streamed = map[string]bool{"StatusEventsFunction": true, "McpFunction": true}

// streamedGateway serves the template's routes: the streamed ones with
// f, every other with a function that fails.
func streamedGateway(t *testing.T, f *streamFn) *httptest.Server {
	t.Helper()
	tp, err := samtemplate.Load("../../../template.yaml", samtemplate.Names{StackName: "gen", Region: "us-east-1", Account: "123456789012",
		Parameters: map[string]string{"FFmpegLayerArn": "arn:aws:lambda:us-east-1:123456789012:layer:x:1"}})
	if err != nil {
		t.Fatal(err)
	}
	broken := &fn{answer: func(map[string]any) lambdaruntime.Result {
		return lambdaruntime.Result{IsError: true, ErrorType: "Runtime.ExitError", ErrorMessage: "exit status 2"}
	}}
	var routes []Route
	for _, fnc := range tp.Functions {
		for _, rt := range fnc.Routes {
			if rt.Stream != streamed[fnc.LogicalID] {
				t.Errorf("%s %s of %s: Stream %v", rt.Method, rt.Path, fnc.LogicalID, rt.Stream)
			}
			var inv Invoker = broken
			if streamed[fnc.LogicalID] {
				inv = f
			}
			// No authorizer here: the route is what is tested.
			rt.Authorizer, rt.APIKeyRequired = "", false
			routes = append(routes, Route{Route: rt, Function: fnc.LogicalID, Invoker: inv})
		}
	}
	srv := httptest.NewServer(New(Config{API: tp.API, Routes: routes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Account: "123456789012", APIID: "api", Region: "us-east-1"}))
	t.Cleanup(srv.Close)
	return srv
}

// A streamed route answers with the prelude's status and headers, and
// passes the body on as the function writes it: the client reads the
// first part before the function writes the second.
func TestStreamedRoutePassesTheBodyOnAsWritten(t *testing.T) {
	pr, pw := io.Pipe()
	f := &streamFn{stream: func() lambdaruntime.Result { return lambdaruntime.Result{Stream: pr} }}
	srv := streamedGateway(t, f)
	go pw.Write([]byte(`{"statusCode":200,"headers":{"Content-Type":"text/event-stream"},"multiValueHeaders":{"X-Two":["a","b"]}}` +
		"\x00\x00\x00\x00\x00\x00\x00\x00" + "event: pending\n\n"))

	res, err := http.Get(srv.URL + "/" + "v1/api/gen/status/gen_1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || strings.Join(res.Header.Values("X-Two"), ",") != "a,b" {
		t.Fatalf("%d %v, want 200 with the prelude's headers", res.StatusCode, res.Header)
	}
	br := bufio.NewReader(res.Body)
	if line, err := br.ReadString('\n'); line != "event: pending\n" {
		t.Fatalf("first line %q (%v), want the first event before the function writes more", line, err)
	}
	go func() {
		pw.Write([]byte("event: completed\n\n"))
		pw.Close()
	}()
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\nevent: completed\n\n" {
		t.Errorf("rest %q (%v)", rest, err)
	}
}

// What API Gateway answers when a streamed answer goes wrong before its
// prelude: a 502, as for a buffered one.
func TestStreamedRouteFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  func() lambdaruntime.Result
	}{
		{"function error", func() lambdaruntime.Result {
			return lambdaruntime.Result{IsError: true, ErrorType: "errorString", ErrorMessage: "boom"}
		}},
		{"no delimiter", func() lambdaruntime.Result {
			return lambdaruntime.Result{Stream: io.NopCloser(strings.NewReader(`{"statusCode":200}` + "event: x\n\n"))}
		}},
		{"bad prelude", func() lambdaruntime.Result {
			return lambdaruntime.Result{Stream: io.NopCloser(strings.NewReader("{not json\x00\x00\x00\x00\x00\x00\x00\x00body"))}
		}},
		{"bad status", func() lambdaruntime.Result {
			return lambdaruntime.Result{Stream: io.NopCloser(strings.NewReader(`{"statusCode":42}` + "\x00\x00\x00\x00\x00\x00\x00\x00"))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := streamedGateway(t, &streamFn{stream: tc.res})
			res, err := http.Get(srv.URL + "/v1/api/gen/status/gen_1/events")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadGateway {
				t.Errorf("%d %q, want 502", res.StatusCode, b)
			}
		})
	}
}
