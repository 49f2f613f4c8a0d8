package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/genvideo/gen/infra/awslocal/apikeys"
	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
)

// fn is a Lambda at the boundary: it answers with answer(event).
type fn struct {
	mu     sync.Mutex
	calls  int
	last   map[string]any
	answer func(ev map[string]any) lambdaruntime.Result
}

func (f *fn) Invoke(_ context.Context, _ string, event []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error) {
	var ev map[string]any
	json.Unmarshal(event, &ev)
	f.mu.Lock()
	f.calls++
	f.last = ev
	f.mu.Unlock()
	return f.answer(ev), nil, false, nil
}

func ok(body string) lambdaruntime.Result {
	b, _ := json.Marshal(map[string]any{"statusCode": 200, "headers": map[string]string{"Content-Type": "application/json"}, "body": body})
	return lambdaruntime.Result{Payload: b}
}

func TestGateway(t *testing.T) {
	tp, err := samtemplate.Load("../../../template.yaml", samtemplate.Names{StackName: "gen", Region: "us-east-1", Account: "123456789012",
		Parameters: map[string]string{"FFmpegLayerArn": "arn:aws:lambda:us-east-1:123456789012:layer:x:1"}})
	if err != nil {
		t.Fatal(err)
	}
	auth := &fn{answer: func(ev map[string]any) lambdaruntime.Result {
		key := ev["headers"].(map[string]any)["X-Api-Key"]
		if key == "bad" {
			return lambdaruntime.Result{IsError: true, ErrorType: "errorString", ErrorMessage: "Unauthorized"}
		}
		effect := "Allow"
		if key == "denied" {
			effect = "Deny"
		}
		id := "key_1"
		if k, _ := key.(string); strings.HasPrefix(k, "key_") {
			id = k // another key, its own usage-plan key
		}
		b, _ := json.Marshal(map[string]any{"principalId": id, "usageIdentifierKey": "gen-usage-" + id,
			"policyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": effect, "Action": "execute-api:Invoke", "Resource": "*"}}},
			"context":        map[string]any{"keyId": "key_1"}})
		return lambdaruntime.Result{Payload: b}
	}}
	models := &fn{answer: func(map[string]any) lambdaruntime.Result { return ok(`{"success":true}`) }}
	upload := &fn{answer: func(map[string]any) lambdaruntime.Result { return ok(`{}`) }}
	broken := &fn{answer: func(map[string]any) lambdaruntime.Result {
		return lambdaruntime.Result{IsError: true, ErrorType: "Runtime.ExitError", ErrorMessage: "exit status 2"}
	}}
	keys := apikeys.New()
	keys.PutPlan(apikeys.Plan{ID: "std", Name: "std", Throttle: &apikeys.Throttle{RateLimit: 0.001, BurstLimit: 5}})
	for _, k := range []string{"gen-usage-key_1", "gen-usage-key_2", "gen-usage-key_3"} {
		if err := keys.EnsureKey(k, "acct_1", "std"); err != nil {
			t.Fatal(err)
		}
	}
	var routes []Route
	for _, f := range tp.Functions {
		for _, rt := range f.Routes {
			var inv Invoker
			switch f.LogicalID {
			case "ModelsFunction":
				inv = models
			case "ImageToVideoFunction":
				inv = upload
			default:
				inv = broken
			}
			routes = append(routes, Route{Route: rt, Function: f.LogicalID, Invoker: inv})
		}
	}
	g := New(Config{API: tp.API, Routes: routes, Authorizers: map[string]Invoker{"ApiKeyAuthorizer": auth}, Keys: keys,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Account: "123456789012", APIID: "api", Region: "us-east-1"})

	do := func(method, path, key, ctype string, body []byte) (int, string) {
		r := httptest.NewRequest(method, path, bytes.NewReader(body))
		if key != "" {
			r.Header.Set("X-API-Key", key)
		}
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	tests := []struct {
		name, method, path, key, ctype string
		body                           []byte
		status                         int
		bodyHas                        string
	}{
		{"no key", "GET", "/v1/api/gen/models", "", "", nil, 401, `"API key missing or invalid"`},
		{"authorizer says Unauthorized", "GET", "/v1/api/gen/models", "bad", "", nil, 401, `"UNAUTHORIZED"`},
		{"authorizer denies", "GET", "/v1/api/gen/models", "denied", "", nil, 401, `"Invalid API key"`},
		{"allowed", "GET", "/v1/api/gen/models", "good", "", nil, 200, `{"success":true}`},
		{"no route", "GET", "/v1/api/gen/nothing", "good", "", nil, 404, `"NOT_FOUND"`},
		{"outside the stage", "GET", "/api/gen/models", "good", "", nil, 404, `"NOT_FOUND"`},
		{"other method, no authorizer", "DELETE", "/v1/api/gen/status/abc", "", "", nil, 502, `"INTERNAL_ERROR"`},
		{"over 10 MB", "POST", "/v1/api/gen/image-to-video", "good", "multipart/form-data; boundary=x", make([]byte, 10<<20+1), 413, `"FILE_TOO_LARGE"`},
		{"over Lambda's 6 MB once encoded", "POST", "/v1/api/gen/image-to-video", "good", "multipart/form-data; boundary=x", make([]byte, 5<<20), 413, `"FILE_TOO_LARGE"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(tc.method, tc.path, tc.key, tc.ctype, tc.body)
			if status != tc.status || !strings.Contains(body, tc.bodyHas) {
				t.Errorf("%s %s: %d %.300s; want %d with %s", tc.method, tc.path, status, body, tc.status, tc.bodyHas)
			}
		})
	}

	// Issue 24, defect 4: the stage's method throttling is for all
	// clients of a method together, so a keyed route has none: one key
	// spending its plan (and far more) leaves another's requests alone.
	// A route without a key is throttled, at PublicBurstLimit.
	t.Run("one key's throttle does not touch another's", func(t *testing.T) {
		throttled := 0
		for range 150 {
			if status, _ := do("GET", "/v1/api/gen/history", "key_2", "", nil); status == 429 {
				throttled++
			}
		}
		if throttled == 0 {
			t.Fatalf("150 requests of one key were never throttled by its plan (burst 5)")
		}
		if status, body := do("GET", "/v1/api/gen/history", "key_3", "", nil); status == 429 {
			t.Errorf("another key's first request: %d %s, want it served", status, body)
		}
		public := 0
		for range 150 {
			if status, _ := do("GET", "/v1/openapi.json", "", "", nil); status == 429 {
				public++
			}
		}
		if public == 0 {
			t.Errorf("150 requests of GET /openapi.json, without a key, were never throttled")
		}
	})

	t.Run("binary bodies reach the function base64 encoded, with the authorizer's context", func(t *testing.T) {
		if status, body := do("POST", "/v1/api/gen/image-to-video", "good", "multipart/form-data; boundary=x", []byte("\x00\x01")); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		ev := upload.last
		if ev["isBase64Encoded"] != true || ev["body"] != "AAE=" {
			t.Errorf("event body %v, isBase64Encoded %v", ev["body"], ev["isBase64Encoded"])
		}
		rc := ev["requestContext"].(map[string]any)
		if rc["authorizer"].(map[string]any)["keyId"] != "key_1" || rc["identity"].(map[string]any)["apiKey"] != "gen-usage-key_1" || rc["requestId"] == "" {
			t.Errorf("requestContext %v", rc)
		}
	})

	t.Run("the authorizer's answer is cached by key", func(t *testing.T) {
		before := auth.calls
		do("GET", "/v1/api/gen/models", "good", "", nil)
		if auth.calls != before {
			t.Errorf("authorizer called %d more times for a cached key", auth.calls-before)
		}
	})

	t.Run("the usage plan's burst, then THROTTLED", func(t *testing.T) {
		status, body := do("GET", "/v1/api/gen/models", "good", "", nil)
		for i := 0; i < 10 && status != 429; i++ {
			status, body = do("GET", "/v1/api/gen/models", "good", "", nil)
		}
		if status != 429 || !strings.Contains(body, `"RATE_LIMIT_EXCEEDED"`) {
			t.Errorf("%d %s; want the THROTTLED response", status, body)
		}
	})
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, path string
		ok            bool
		param         string
	}{
		{"/api/gen/status/{taskId}", "/api/gen/status/gen_1", true, "gen_1"},
		{"/api/gen/status/{taskId}", "/api/gen/status/", false, ""},
		{"/api/gen/status/{taskId}", "/api/gen/status/a/b", false, ""},
		{"/docs", "/docs", true, ""},
	}
	for _, tc := range tests {
		params, _, ok := matchPath(tc.pattern, tc.path)
		if ok != tc.ok || params["taskId"] != tc.param {
			t.Errorf("matchPath(%q, %q) = %v, %v", tc.pattern, tc.path, params, ok)
		}
	}
}
