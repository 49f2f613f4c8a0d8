// The tests of functions/ build every function's real binary and drive it
// the way Lambda does, through a fake Runtime API, with each function's
// testdata/event.json: API Gateway REST proxy events (base64 multipart
// uploads among them, and the docs function's public GET), state machine
// step events, the authorizer's REQUEST event and the sweeper's scheduled
// event. Behind the functions run DynamoDB Local, a fake S3 that verifies
// presigned URLs, and fakes of Step Functions and Secrets Manager (see
// shared/testing/awsstacktest). lean_test.go checks what the endpoint
// functions link, and the size of their Lambda builds.
package functions_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/openapi"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/testing/sfnstarttest"
	"github.com/genvideo/gen/shared/workflow"
)

func TestMain(m *testing.M) { dynamolocal.Main(m) }

// What the testdata events refer to.
const (
	testKey   = "gen_TestdataKeyForLocalInvokeOnly00000000001" // their X-API-Key
	keyID     = "key_testdata0001"
	accountID = "acct_testdata"
	task1     = "gen_1767225600000_testdata01" // status, download and the steps
	task2     = "gen_1767225600000_testdata02" // fail
	credits   = 10000
)

// functionNames are the directories of functions/, one Lambda each.
var functionNames = []string{
	"text-to-video", "image-to-video", "first-last-frame", "status", "download", "history", "models", "docs",
	"playground", "uploads", "mark-processing", "generate", "complete", "fail", "authorizer", "sweeper", "rotate-signer",
}

func init() {
	functionNames = append(functionNames, "poll", "task-expiry", "cancel", "delete-task", "credits", "quote", "status-events",
		"webhooks", "webhook-secret", "webhook-delete", "webhook-deliveries", "webhook-replay", "webhooks-deliver",
		"openai-videos", "openai-video", "openai-content", "model-check", "mcp", "extend", "openai-extensions")
}

type harness struct {
	t       *testing.T // the parent test, which the cached processes live as long as
	env     *awsstacktest.Env
	bins    map[string]string
	running map[string]*awsstacktest.Function
}

// fn returns the running process of a function, starting it on first use
// (its cold start); it serves the later subtests too.
func (h *harness) fn(t *testing.T, name string) *awsstacktest.Function {
	t.Helper()
	if f, ok := h.running[name]; ok {
		return f
	}
	f := h.start(h.t, name)
	h.running[name] = f
	return f
}

func (h *harness) start(t *testing.T, name string, extraEnv ...string) *awsstacktest.Function {
	t.Helper()
	bin, ok := h.bins[name]
	if !ok {
		t.Fatalf("no binary for function %s", name)
	}
	return awsstacktest.StartFunction(t, name, bin, h.env.Environ(t, extraEnv...))
}

func readEvent(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(name, "testdata", "event.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// proxyEvent reads a function's API Gateway event for changes.
func proxyEvent(t *testing.T, name string) events.APIGatewayProxyRequest {
	t.Helper()
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(readEvent(t, name), &ev); err != nil {
		t.Fatalf("%s/testdata/event.json: %v", name, err)
	}
	return ev
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// response decodes an endpoint's answer and its JSON body into body.
func response(t *testing.T, res awsstacktest.Result, body any) events.APIGatewayProxyResponse {
	t.Helper()
	if res.IsError {
		t.Fatalf("function error %s: %s", res.ErrorType, res.ErrorMessage)
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		t.Fatalf("response %s: %v", res.Payload, err)
	}
	if resp.IsBase64Encoded {
		t.Fatalf("JSON response marked base64: %s", res.Payload)
	}
	if ct := strings.Join(resp.MultiValueHeaders["Content-Type"], ","); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if body != nil {
		if err := json.Unmarshal([]byte(resp.Body), body); err != nil {
			t.Fatalf("body %s: %v", resp.Body, err)
		}
	}
	return resp
}

func TestFunctions(t *testing.T) {
	env := awsstacktest.Start(t)
	h := &harness{t: t, env: env, bins: awsstacktest.Build(t, "github.com/genvideo/gen/functions/..."),
		running: map[string]*awsstacktest.Function{}}
	for _, name := range functionNames {
		if _, ok := h.bins[name]; !ok {
			t.Errorf("go build made no binary for functions/%s", name)
		}
	}
	if len(h.bins) != len(functionNames) {
		t.Errorf("built %d functions, want %d: %v", len(h.bins), len(functionNames), h.bins)
	}

	ctx := context.Background()
	st := env.Store
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.CreateAccount(ctx, domain.Account{ID: accountID, Credits: credits, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateKey(ctx, store.Key{ID: keyID, Hash: apikey.Hash(testKey), AccountID: accountID,
		Name: "testdata", Tier: ratelimit.Pro, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	lite := params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p",
		PersonGeneration: "allow_adult"}
	newTask := func(id string, created time.Time) task.Task {
		t.Helper()
		tk := task.Task{ID: id, AccountID: accountID, KeyName: "testdata", Type: "text-to-video",
			Model: "gen-3.1-lite-generate-001", Prompt: "A paper boat drifting on a pond", Params: lite,
			CreditsCost: 35, Status: task.Pending, CreatedAt: created, Deadline: created.Add(10 * time.Minute)}
		if _, err := st.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatalf("create task %s: %v", id, err)
		}
		return tk
	}
	newTask(task1, now)

	t.Run("models", func(t *testing.T) {
		var body struct {
			Success bool
			Models  []struct{ ID string }
		}
		resp := response(t, h.fn(t, "models").Invoke(t, readEvent(t, "models")), &body)
		if resp.StatusCode != http.StatusOK || !body.Success || len(body.Models) == 0 {
			t.Errorf("models: %d %s, want 200 with the models", resp.StatusCode, resp.Body)
		}
	})

	t.Run("model-check", func(t *testing.T) { testModelCheck(t, h) })

	t.Run("docs", func(t *testing.T) {
		// Without any of the variables the other functions need: the
		// documents are compiled in.
		f := h.start(t, "docs", awsstack.EnvTablePrefix+"=", awsstack.EnvBucket+"=",
			awsstack.EnvStateMachineARN+"=", awsstack.EnvSignerSecretARN+"=")
		var doc struct {
			OpenAPI string
			Paths   map[string]json.RawMessage
		}
		resp := response(t, f.Invoke(t, readEvent(t, "docs")), &doc)
		if resp.StatusCode != http.StatusOK || resp.Body != string(openapi.JSON()) {
			t.Fatalf("GET /openapi.json: %d with %d bytes, want 200 with the %d-byte document", resp.StatusCode, len(resp.Body), len(openapi.JSON()))
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.1.") || doc.Paths["/api/gen/text-to-video"] == nil {
			t.Errorf("document: openapi %q with paths %v, want 3.1.x with the contract's paths", doc.OpenAPI, slices.Collect(maps.Keys(doc.Paths)))
		}

		ev := proxyEvent(t, "docs")
		ev.Path, ev.Resource, ev.RequestContext.ResourcePath = "/docs", "/docs", "/docs"
		var page events.APIGatewayProxyResponse
		stepResult(t, f.Invoke(t, mustJSON(t, ev)), &page)
		if ct := strings.Join(page.MultiValueHeaders["Content-Type"], ","); page.StatusCode != http.StatusOK ||
			!strings.HasPrefix(ct, "text/html") || page.IsBase64Encoded || !strings.Contains(page.Body, `href="openapi.json"`) {
			t.Errorf("GET /docs: %d %q (base64 %v), want 200 with the HTML page linking openapi.json", page.StatusCode, ct, page.IsBase64Encoded)
		}

		ev.HTTPMethod = http.MethodPost
		var body struct{ Error string }
		resp = response(t, f.Invoke(t, mustJSON(t, ev)), &body)
		if allow := strings.Join(resp.MultiValueHeaders["Allow"], ","); resp.StatusCode != http.StatusMethodNotAllowed ||
			body.Error != "METHOD_NOT_ALLOWED" || allow != "GET, HEAD" {
			t.Errorf("POST /docs: %d %s with Allow %q, want 405 METHOD_NOT_ALLOWED with Allow GET, HEAD", resp.StatusCode, resp.Body, allow)
		}
	})

	t.Run("playground", func(t *testing.T) {
		// Without the variables the API's functions need: the page is
		// compiled in; the bucket's origin reaches its policy.
		f := h.start(t, "playground", awsstack.EnvTablePrefix+"=", awsstack.EnvBucket+"=",
			awsstack.EnvStateMachineARN+"=", awsstack.EnvSignerSecretARN+"=",
			"GEN_PLAYGROUND_MEDIA_ORIGINS=https://gen-media.s3.us-east-1.amazonaws.com")
		var page events.APIGatewayProxyResponse
		stepResult(t, f.Invoke(t, readEvent(t, "playground")), &page)
		ct := strings.Join(page.MultiValueHeaders["Content-Type"], ",")
		csp := strings.Join(page.MultiValueHeaders["Content-Security-Policy"], ",")
		if page.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/html") || page.IsBase64Encoded ||
			!strings.Contains(page.Body, `src="playground/app.js"`) ||
			!strings.Contains(csp, "media-src 'self' blob: https://gen-media.s3.us-east-1.amazonaws.com;") {
			t.Errorf("GET /: %d %q (base64 %v) with policy %q, want 200 with the HTML page and the bucket in media-src", page.StatusCode, ct, page.IsBase64Encoded, csp)
		}

		ev := proxyEvent(t, "playground")
		ev.Path, ev.Resource, ev.RequestContext.ResourcePath = "/playground/app.js", "/playground/{file}", "/playground/{file}"
		ev.PathParameters = map[string]string{"file": "app.js"}
		stepResult(t, f.Invoke(t, mustJSON(t, ev)), &page)
		if ct := strings.Join(page.MultiValueHeaders["Content-Type"], ","); page.StatusCode != http.StatusOK ||
			!strings.HasPrefix(ct, "text/javascript") || page.IsBase64Encoded || !strings.Contains(page.Body, "import ") {
			t.Errorf("GET /playground/app.js: %d %q (base64 %v), want 200 with the script", page.StatusCode, ct, page.IsBase64Encoded)
		}

		ev.HTTPMethod = http.MethodPost
		var body struct{ Error string }
		resp := response(t, f.Invoke(t, mustJSON(t, ev)), &body)
		if resp.StatusCode != http.StatusMethodNotAllowed || body.Error != "METHOD_NOT_ALLOWED" {
			t.Errorf("POST /playground/app.js: %d %s, want 405 METHOD_NOT_ALLOWED", resp.StatusCode, resp.Body)
		}
	})

	var started []string
	t.Run("text-to-video", func(t *testing.T) {
		var body struct {
			TaskID      string
			Status      string
			CreditsUsed int
		}
		resp := response(t, h.fn(t, "text-to-video").Invoke(t, readEvent(t, "text-to-video")), &body)
		if resp.StatusCode != http.StatusAccepted || body.Status != "pending" || body.CreditsUsed != 35 {
			t.Fatalf("text-to-video: %d %s, want 202 pending costing 35", resp.StatusCode, resp.Body)
		}
		started = append(started, body.TaskID)
		// The execution is named by the task, with the workflow's input.
		execs := env.SFN.Executions()
		if len(execs) != 1 || execs[0].Name != body.TaskID {
			t.Fatalf("executions %+v, want one named %s", execs, body.TaskID)
		}
		var in workflow.Input
		if err := json.Unmarshal([]byte(execs[0].Input), &in); err != nil || in.TaskID != body.TaskID ||
			in.TimeoutSeconds < 590 || in.TimeoutSeconds > 600 {
			t.Errorf("execution input %s, want taskId %s and about 600 seconds", execs[0].Input, body.TaskID)
		}
	})

	t.Run("text-to-video start fails", func(t *testing.T) {
		env.SFN.FailStarts("StateMachineDoesNotExist")
		defer env.SFN.FailStarts("")
		before, err := st.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error string }
		resp := response(t, h.fn(t, "text-to-video").Invoke(t, readEvent(t, "text-to-video")), &body)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("with StartExecution failing: %d %s, want 503", resp.StatusCode, resp.Body)
		}
		after, err := st.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Credits != before.Credits || after.InFlight != before.InFlight {
			t.Errorf("account went from %d credits, %d in flight to %d, %d; want no change (refunded)",
				before.Credits, before.InFlight, after.Credits, after.InFlight)
		}
	})

	type imageInfo struct {
		OriginalName string
		Size         int64
		MimeType     string
	}
	t.Run("image-to-video", func(t *testing.T) {
		var body struct {
			TaskID    string
			ImageInfo imageInfo
		}
		ev := readEvent(t, "image-to-video")
		resp := response(t, h.fn(t, "image-to-video").Invoke(t, ev), &body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("image-to-video: %d %s, want 202", resp.StatusCode, resp.Body)
		}
		started = append(started, body.TaskID)
		want := imageInfo{OriginalName: "harbour.png", Size: body.ImageInfo.Size, MimeType: "image/png"}
		if body.ImageInfo != want || body.ImageInfo.Size < 100 {
			t.Errorf("imageInfo %+v, want harbour.png, image/png", body.ImageInfo)
		}
		// The image went to S3 byte for byte.
		data, ct, ok := env.S3.Object(t, awsstacktest.Bucket, "inputs/"+body.TaskID+"/image.png")
		if !ok {
			t.Fatalf("no image in S3 for %s: %v", body.TaskID, env.S3.Keys(t, awsstacktest.Bucket, "inputs/"))
		}
		if ct != "image/png" || int64(len(data)) != body.ImageInfo.Size || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("stored image: %d bytes of %s, want the %d-byte PNG", len(data), ct, body.ImageInfo.Size)
		}
		multipartPart(t, proxyEvent(t, "image-to-video"), data)
	})

	t.Run("image-to-video over the deployment limit", func(t *testing.T) {
		f := h.start(t, "image-to-video", awsstack.EnvMaxImageBytes+"=256")
		var body struct {
			Error   string
			Message string
			Details struct{ MaxBytes int64 }
		}
		resp := response(t, f.Invoke(t, readEvent(t, "image-to-video")), &body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || body.Details.MaxBytes != 256 {
			t.Fatalf("oversized image: %d %s, want 413 with maxBytes 256", resp.StatusCode, resp.Body)
		}
		for _, want := range []string{"256 bytes", "API Gateway", "AWS Lambda", "20 MiB"} {
			if !strings.Contains(body.Message, want) {
				t.Errorf("413 message %q does not name %q", body.Message, want)
			}
		}
	})

	t.Run("first-last-frame", func(t *testing.T) {
		var body struct {
			TaskID                string
			FirstFrame, LastFrame imageInfo
		}
		resp := response(t, h.fn(t, "first-last-frame").Invoke(t, readEvent(t, "first-last-frame")), &body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("first-last-frame: %d %s, want 202", resp.StatusCode, resp.Body)
		}
		started = append(started, body.TaskID)
		if body.FirstFrame.OriginalName != "day.png" || body.LastFrame.OriginalName != "night.png" {
			t.Errorf("frames %+v, %+v, want day.png and night.png", body.FirstFrame, body.LastFrame)
		}
		keys := env.S3.Keys(t, awsstacktest.Bucket, "inputs/"+body.TaskID+"/")
		want := []string{"inputs/" + body.TaskID + "/firstFrame.png", "inputs/" + body.TaskID + "/lastFrame.png"}
		if !slices.Equal(keys, want) {
			t.Errorf("inputs in S3 %v, want %v", keys, want)
		}

		// GEN_MAX_IMAGE_BYTES bounds both frames together: half each.
		larger := max(body.FirstFrame.Size, body.LastFrame.Size)
		total := 2 * (larger - 1)
		f := h.start(t, "first-last-frame", awsstack.EnvMaxImageBytes+"="+strconv.FormatInt(total, 10))
		var tooLarge struct {
			Error   string
			Details struct{ MaxBytes int64 }
		}
		resp = response(t, f.Invoke(t, readEvent(t, "first-last-frame")), &tooLarge)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || tooLarge.Details.MaxBytes != larger-1 {
			t.Errorf("frames of %d and %d bytes with %s=%d: %d %s, want 413 with maxBytes %d",
				body.FirstFrame.Size, body.LastFrame.Size, awsstack.EnvMaxImageBytes, total, resp.StatusCode, resp.Body, larger-1)
		}
	})

	if n := env.Secrets.Reads(); n != 0 {
		t.Errorf("the start endpoints read the signer secret %d times, want 0 (only signing reads it)", n)
	}

	t.Run("mark-processing", func(t *testing.T) {
		res := h.fn(t, "mark-processing").Invoke(t, readEvent(t, "mark-processing"))
		var out workflow.TaskState
		stepResult(t, res, &out)
		if out.TaskID != task1 || out.Status != task.Processing {
			t.Errorf("mark-processing = %+v, want %s processing", out, task1)
		}
		res = h.fn(t, "mark-processing").Invoke(t, mustJSON(t, workflow.TaskRef{TaskID: "gen_1767225600000_nosuchtask"}))
		if !res.IsError || res.ErrorType != "TaskNotFound" {
			t.Errorf("mark-processing of an unknown task = %+v, want the error type TaskNotFound", res)
		}
	})

	var generated workflow.Generated
	t.Run("generate", func(t *testing.T) {
		res := h.fn(t, "generate").Invoke(t, readEvent(t, "generate"))
		stepResult(t, res, &generated)
		if len(generated.Videos) != 1 || generated.Videos[0].Key != workflow.VideoKey(task1, 0) {
			t.Fatalf("generate = %+v, want one video at %s", generated, workflow.VideoKey(task1, 0))
		}
		data, ct, ok := env.S3.Object(t, awsstacktest.Bucket, generated.Videos[0].Key)
		if !ok || ct != "video/mp4" || int64(len(data)) != generated.Videos[0].Size || len(data) < 12 || string(data[4:8]) != "ftyp" {
			t.Errorf("video in S3: %d bytes of %q (found %v), want the %d-byte MP4", len(data), ct, ok, generated.Videos[0].Size)
		}
		res = h.fn(t, "generate").Invoke(t, []byte(`{}`))
		if !res.IsError || res.ErrorType != "InvalidInput" {
			t.Errorf("generate of {} = %+v, want the error type InvalidInput", res)
		}
	})

	t.Run("complete", func(t *testing.T) {
		var in workflow.CompleteInput
		if err := json.Unmarshal(readEvent(t, "complete"), &in); err != nil {
			t.Fatal(err)
		}
		// The testdata event has the shape Generate answers; the test
		// passes on what Generate really made, as the state machine does.
		if in.TaskID != task1 || len(in.Result.Videos) != 1 || in.Result.Videos[0].Key != generated.Videos[0].Key {
			t.Fatalf("complete/testdata/event.json %+v does not match the generate step's output %+v", in, generated)
		}
		in.Result = generated
		var out workflow.TaskState
		stepResult(t, h.fn(t, "complete").Invoke(t, mustJSON(t, in)), &out)
		if out.Status != task.Completed {
			t.Errorf("complete = %+v, want completed", out)
		}
	})

	var completedAt time.Time
	type video struct {
		URL, MimeType string
		ExpiresAt     time.Time
	}
	t.Run("status", func(t *testing.T) {
		var body struct {
			Status      string
			CompletedAt time.Time
			Videos      []video
		}
		resp := response(t, h.fn(t, "status").Invoke(t, readEvent(t, "status")), &body)
		if resp.StatusCode != http.StatusOK || body.Status != "completed" || len(body.Videos) != 1 {
			t.Fatalf("status: %d %s, want 200 completed with one video", resp.StatusCode, resp.Body)
		}
		completedAt = body.CompletedAt
		v := body.Videos[0]
		if want := completedAt.Add(24 * time.Hour); !v.ExpiresAt.Equal(want) {
			t.Errorf("expiresAt %s, want completedAt + 24h = %s", v.ExpiresAt, want)
		}
		checkPresigned(t, env, v.URL, v.ExpiresAt, generated.Videos[0].Key)
		if env.Secrets.Reads() != 1 {
			t.Errorf("the signer secret was read %d times, want once", env.Secrets.Reads())
		}
	})

	// The event stream of the completed task: its three states, the
	// terminal one last, in the streamed response's format (a JSON
	// prelude, eight NUL bytes, the body; endpoint.Stream).
	t.Run("status-events", func(t *testing.T) {
		res := h.fn(t, "status-events").Invoke(t, readEvent(t, "status-events"))
		if res.IsError {
			t.Fatalf("function error %s: %s", res.ErrorType, res.ErrorMessage)
		}
		prelude, body, ok := bytes.Cut(res.Payload, make([]byte, 8))
		var resp struct {
			StatusCode int                 `json:"statusCode"`
			Headers    map[string][]string `json:"multiValueHeaders"`
		}
		if err := json.Unmarshal(prelude, &resp); !ok || err != nil {
			t.Fatalf("response %q: not a prelude and eight NUL bytes (%v)", res.Payload, err)
		}
		b := string(body)
		i, j, k := strings.Index(b, "event: pending"), strings.Index(b, "event: processing"), strings.Index(b, "id: 3000\nevent: completed")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(strings.Join(resp.Headers["Content-Type"], ","), "text/event-stream") || i < 0 || j < i || k < j {
			t.Errorf("status-events: %d %v %q; want 200 text/event-stream: pending, processing, completed", resp.StatusCode, resp.Headers, b)
		}
	})

	// The MCP endpoint: get_task of the completed task, answered in a
	// stream (a prelude, eight NUL bytes, the body: endpoint.Stream) as
	// one Server-Sent Event with the tool's result; and a request without
	// a key refused 401 with its challenge before any message is read.
	t.Run("mcp", func(t *testing.T) {
		streamed := func(t *testing.T, ev []byte) (int, map[string][]string, string) {
			t.Helper()
			res := h.fn(t, "mcp").Invoke(t, ev)
			if res.IsError {
				t.Fatalf("function error %s: %s", res.ErrorType, res.ErrorMessage)
			}
			prelude, body, ok := bytes.Cut(res.Payload, make([]byte, 8))
			var resp struct {
				StatusCode int                 `json:"statusCode"`
				Headers    map[string][]string `json:"multiValueHeaders"`
			}
			if err := json.Unmarshal(prelude, &resp); !ok || err != nil {
				t.Fatalf("response %q: not a prelude and eight NUL bytes (%v)", res.Payload, err)
			}
			return resp.StatusCode, resp.Headers, string(body)
		}
		status, headers, body := streamed(t, readEvent(t, "mcp"))
		data, _, _ := strings.Cut(strings.TrimSpace(body[strings.Index(body, "data: ")+len("data: "):]), "\n")
		var msg struct {
			Result struct {
				IsError           bool
				StructuredContent struct {
					Task struct {
						TaskID, Status string
						Videos         []video
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil || status != http.StatusOK ||
			!strings.HasPrefix(strings.Join(headers["Content-Type"], ","), "text/event-stream") {
			t.Fatalf("mcp: %d %v %q (%v); want 200 text/event-stream with the result", status, headers, body, err)
		}
		task := msg.Result.StructuredContent.Task
		if msg.Result.IsError || task.TaskID != task1 || task.Status != "completed" || len(task.Videos) != 1 {
			t.Fatalf("get_task through MCP = %s", data)
		}
		checkPresigned(t, env, task.Videos[0].URL, task.Videos[0].ExpiresAt, generated.Videos[0].Key)

		ev := proxyEvent(t, "mcp")
		delete(ev.Headers, "Authorization")
		delete(ev.MultiValueHeaders, "Authorization")
		status, headers, body = streamed(t, mustJSON(t, ev))
		if status != http.StatusUnauthorized || strings.Join(headers["Www-Authenticate"], ",") != `Bearer realm="gen"` || !strings.Contains(body, "UNAUTHORIZED") {
			t.Errorf("mcp without a key: %d %v %q, want 401 with the Bearer challenge", status, headers, body)
		}
	})

	t.Run("download", func(t *testing.T) {
		var body struct {
			TotalVideos int
			Videos      []video
		}
		resp := response(t, h.fn(t, "download").Invoke(t, readEvent(t, "download")), &body)
		if resp.StatusCode != http.StatusOK || body.TotalVideos != 1 || len(body.Videos) != 1 {
			t.Fatalf("download: %d %s, want 200 with one video", resp.StatusCode, resp.Body)
		}
		checkPresigned(t, env, body.Videos[0].URL, body.Videos[0].ExpiresAt, generated.Videos[0].Key)
	})

	// The OpenAI-compatible API's functions, with the key as a bearer
	// token (infra/docs/clients.md, "OpenAI-compatible videos API").
	t.Run("openai-video", func(t *testing.T) {
		var v struct {
			ID, Object, Status, Seconds, Size string
			ExpiresAt                         int64 `json:"expires_at"`
		}
		resp := response(t, h.fn(t, "openai-video").Invoke(t, readEvent(t, "openai-video")), &v)
		if resp.StatusCode != http.StatusOK || v.ID != task1 || v.Object != "video" || v.Status != "completed" ||
			v.Seconds != "4" || v.Size != "1280x720" || v.ExpiresAt != completedAt.Add(24*time.Hour).Unix() {
			t.Errorf("openai-video: %d %s, want 200 with the completed video", resp.StatusCode, resp.Body)
		}
	})

	t.Run("openai-content", func(t *testing.T) {
		res := h.fn(t, "openai-content").Invoke(t, readEvent(t, "openai-content"))
		var resp events.APIGatewayProxyResponse
		if res.IsError || json.Unmarshal(res.Payload, &resp) != nil {
			t.Fatalf("openai-content: %s %s %s", res.ErrorType, res.ErrorMessage, res.Payload)
		}
		loc := strings.Join(resp.MultiValueHeaders["Location"], ",")
		if resp.StatusCode != http.StatusFound || loc == "" {
			t.Fatalf("openai-content: %d %v, want a 302 to the signed link", resp.StatusCode, resp.MultiValueHeaders)
		}
		checkPresigned(t, env, loc, completedAt.Add(24*time.Hour), generated.Videos[0].Key)
	})

	t.Run("status and download write nothing to DynamoDB", func(t *testing.T) {
		// The functions talk to DynamoDB through a proxy that records
		// each operation; the usage plan limits these two endpoints, so
		// they count no window, while models still counts its request.
		ops := recordDynamoOps(t, env.Dynamo.Endpoint)
		for _, name := range []string{"status", "download", "models"} {
			f := h.start(t, name, "AWS_ENDPOINT_URL_DYNAMODB="+ops.url)
			for range 3 {
				if resp := response(t, f.Invoke(t, readEvent(t, name)), nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", name, resp.StatusCode, resp.Body)
				}
			}
			writes, reads := ops.take()
			switch {
			case name != "models" && len(writes) != 0:
				t.Errorf("3 %s requests wrote %v, want no DynamoDB write", name, writes)
			case name == "models" && len(writes) == 0:
				t.Errorf("3 models requests wrote nothing: the proxy sees no writes, so it proves nothing")
			case len(reads) == 0:
				t.Errorf("3 %s requests read nothing through the proxy", name)
			}
		}
	})

	t.Run("status without a key", func(t *testing.T) {
		ev := proxyEvent(t, "status")
		delete(ev.Headers, "X-API-Key")
		delete(ev.MultiValueHeaders, "X-API-Key")
		var body struct{ Error string }
		resp := response(t, h.fn(t, "status").Invoke(t, mustJSON(t, ev)), &body)
		if resp.StatusCode != http.StatusUnauthorized || body.Error != "UNAUTHORIZED" {
			t.Errorf("status without X-API-Key: %d %s, want 401 UNAUTHORIZED (the handler checks the key too)", resp.StatusCode, resp.Body)
		}
	})

	t.Run("history", func(t *testing.T) {
		var body struct {
			Videos []struct {
				TaskID string
			}
			Pagination struct {
				Total, Limit int
			}
		}
		resp := response(t, h.fn(t, "history").Invoke(t, readEvent(t, "history")), &body)
		// task1, the three started and the one whose start failed.
		if resp.StatusCode != http.StatusOK || body.Pagination.Total != 5 || body.Pagination.Limit != 5 || len(body.Videos) != 5 {
			t.Fatalf("history: %d %s, want 200 with 5 of 5 tasks", resp.StatusCode, resp.Body)
		}
		var ids []string
		for _, v := range body.Videos {
			ids = append(ids, v.TaskID)
		}
		for _, id := range append([]string{task1}, started...) {
			if !slices.Contains(ids, id) {
				t.Errorf("history %v lacks %s", ids, id)
			}
		}
	})

	t.Run("fail", func(t *testing.T) {
		newTask(task2, time.Now().UTC().Truncate(time.Millisecond))
		before, _ := st.Account(ctx, accountID)
		var out workflow.TaskState
		stepResult(t, h.fn(t, "fail").Invoke(t, readEvent(t, "fail")), &out)
		if out.TaskID != task2 || out.Status != task.Failed {
			t.Errorf("fail = %+v, want %s failed", out, task2)
		}
		tk, err := st.Task(ctx, task2)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Failure == nil || tk.Failure.Code != task.FailGeneration || tk.CreditsRefunded != 35 {
			t.Errorf("task %s: failure %+v, refunded %d; want GENERATION_FAILED, 35", task2, tk.Failure, tk.CreditsRefunded)
		}
		after, _ := st.Account(ctx, accountID)
		if after.Credits != before.Credits+35 {
			t.Errorf("credits %d after the failure, want %d", after.Credits, before.Credits+35)
		}
	})

	t.Run("authorizer", func(t *testing.T) {
		var out events.APIGatewayCustomAuthorizerResponse
		stepResult(t, h.fn(t, "authorizer").Invoke(t, readEvent(t, "authorizer")), &out)
		if out.UsageIdentifierKey != "gen-usage-"+keyID || out.PrincipalID != keyID || out.Context["accountId"] != accountID {
			t.Errorf("authorizer = %+v, want usage key gen-usage-%s, principal %s, account %s", out, keyID, keyID, accountID)
		}
		if st := out.PolicyDocument.Statement; len(st) != 1 || st[0].Effect != "Allow" ||
			!slices.Equal(st[0].Resource, []string{"arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5/prod/*"}) {
			t.Errorf("policy %+v, want Allow on the whole stage", out.PolicyDocument)
		}

		var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
		if err := json.Unmarshal(readEvent(t, "authorizer"), &ev); err != nil {
			t.Fatal(err)
		}
		ev.Headers["X-API-Key"] = apikey.New()
		ev.MultiValueHeaders["X-API-Key"] = []string{ev.Headers["X-API-Key"]}
		var denied events.APIGatewayCustomAuthorizerResponse
		stepResult(t, h.fn(t, "authorizer").Invoke(t, mustJSON(t, ev)), &denied)
		if st := denied.PolicyDocument.Statement; len(st) != 1 || st[0].Effect != "Deny" || denied.UsageIdentifierKey != "" {
			t.Errorf("authorizer with an unknown key = %+v, want a Deny policy (ACCESS_DENIED: Invalid API key)", denied)
		}
		delete(ev.Headers, "X-API-Key")
		delete(ev.MultiValueHeaders, "X-API-Key")
		res := h.fn(t, "authorizer").Invoke(t, mustJSON(t, ev))
		if !res.IsError || res.ErrorMessage != "Unauthorized" {
			t.Errorf("authorizer with no key = %+v, want the error Unauthorized", res)
		}
	})

	t.Run("sweeper", func(t *testing.T) {
		n := time.Now().UTC().Truncate(time.Millisecond)
		// An orphan processing task lost its execution: re-driven. A
		// pending one never got one: its start was answered while the
		// commit was in doubt, so it is failed and refunded, not run
		// (issue 34, defect 4).
		orphan := newTask("gen_1767225600000_orphan0001", n.Add(-2*time.Minute))
		if _, err := st.MarkProcessing(ctx, orphan.ID, n.Add(-2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		never := newTask("gen_1767225600000_never00001", n.Add(-2*time.Minute))
		before, err := st.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		late := newTask("gen_1767225600000_timedout01", n.Add(-15*time.Minute))
		var report struct{ Unfinished, Failed, Started, NotStarted, Errors int }
		stepResult(t, h.fn(t, "sweeper").Invoke(t, readEvent(t, "sweeper")), &report)
		// Unfinished: the three started tasks, the two orphans and the
		// late one.
		if report.Unfinished != 6 || report.Failed != 1 || report.Started != 1 || report.NotStarted != 1 || report.Errors != 0 {
			t.Errorf("sweep report %+v, want 6 unfinished, 1 failed, 1 started, 1 not started", report)
		}
		if !slices.ContainsFunc(env.SFN.Executions(), func(e sfnstarttest.Execution) bool { return e.Name == orphan.ID }) {
			t.Errorf("no execution started for %s: %+v", orphan.ID, env.SFN.Executions())
		}
		if slices.ContainsFunc(env.SFN.Executions(), func(e sfnstarttest.Execution) bool { return e.Name == never.ID }) {
			t.Errorf("an execution was started for %s, which was never started", never.ID)
		}
		nt, err := st.Task(ctx, never.ID)
		if err != nil {
			t.Fatal(err)
		}
		after, err := st.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		// The late task is charged after before and refunded; the
		// never-started one is refunded.
		if nt.Status != task.Failed || after.Credits != before.Credits+35 {
			t.Errorf("never-started task %s %+v, credits %d -> %d; want failed and refunded",
				nt.Status, nt.Failure, before.Credits, after.Credits)
		}
		tk, err := st.Task(ctx, late.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != task.Failed || tk.Failure == nil || tk.Failure.Code != task.FailTimeout {
			t.Errorf("late task: %s %+v, want failed with TIMEOUT", tk.Status, tk.Failure)
		}
	})

	// Last: its task would count in the history and the sweep above.
	t.Run("direct upload of 19 MiB into image-to-video", func(t *testing.T) { testDirectUpload(t, h) })

	// Late: its task would count in the history and the sweep above.
	t.Run("openai-videos", func(t *testing.T) {
		var v struct{ ID, Object, Status, Model string }
		resp := response(t, h.fn(t, "openai-videos").Invoke(t, readEvent(t, "openai-videos")), &v)
		if resp.StatusCode != http.StatusOK || v.Object != "video" || v.Status != "queued" || v.Model != "gen-3.1-lite-generate-001" {
			t.Fatalf("openai-videos: %d %s, want 200 with a queued video", resp.StatusCode, resp.Body)
		}
		ev := proxyEvent(t, "openai-videos")
		ev.HTTPMethod, ev.Body = http.MethodGet, ""
		ev.Headers["Content-Type"], ev.MultiValueHeaders["Content-Type"] = "", nil
		ev.QueryStringParameters = map[string]string{"limit": "1"}
		ev.MultiValueQueryStringParameters = map[string][]string{"limit": {"1"}}
		var list struct {
			Data    []struct{ ID string }
			HasMore bool `json:"has_more"`
		}
		resp = response(t, h.fn(t, "openai-videos").Invoke(t, mustJSON(t, ev)), &list)
		if resp.StatusCode != http.StatusOK || len(list.Data) != 1 || list.Data[0].ID != v.ID || !list.HasMore {
			t.Errorf("openai-videos list: %d %s, want the new video first, and more", resp.StatusCode, resp.Body)
		}
	})

	// Last: delete-task removes task1, which the subtests above read.
	t.Run("cancel, credits and delete-task", func(t *testing.T) { testManage(t, h, newTask) })

	t.Run("webhooks and their delivery", func(t *testing.T) { testWebhooks(t, h) })

	// Not in "cold start without configuration": it must always start.
	t.Run("rotate-signer answers CloudFormation", func(t *testing.T) { testRotateSigner(t, h) })

	t.Run("cold start without configuration", func(t *testing.T) {
		for _, tc := range []struct {
			name, env, want string
		}{
			{"status", awsstack.EnvBucket + "=", awsstack.EnvBucket},
			{"text-to-video", awsstack.EnvGenerationTimeout + "=ten minutes", awsstack.EnvGenerationTimeout},
			{"sweeper", awsstack.EnvStateMachineARN + "=", awsstack.EnvStateMachineARN},
			{"mark-processing", awsstack.EnvTablePrefix + "=", awsstack.EnvTablePrefix},
			{"generate", awsstack.EnvFFmpegPath + "=/nonexistent/ffmpeg", awsstack.EnvFFmpegPath},
		} {
			log := h.start(t, tc.name, tc.env).Exited(t)
			if !strings.Contains(log, tc.want) {
				t.Errorf("%s with %s: log %q does not name %s", tc.name, tc.env, log, tc.want)
			}
		}
	})
}

// stepResult decodes a step's (or the authorizer's) answer.
func stepResult(t *testing.T, res awsstacktest.Result, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("function error %s: %s", res.ErrorType, res.ErrorMessage)
	}
	if err := json.Unmarshal(res.Payload, out); err != nil {
		t.Fatalf("result %s: %v", res.Payload, err)
	}
}

// checkPresigned checks a download URL: signed by the signing user (not
// the function's role), dying at expiresAt to the second, and served by S3
// with the video's bytes.
func checkPresigned(t *testing.T, env *awsstacktest.Env, raw string, expiresAt time.Time, key string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("URL %q: %v", raw, err)
	}
	q := u.Query()
	date, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date of %s: %v", raw, err)
	}
	secs, _ := strconv.Atoi(q.Get("X-Amz-Expires"))
	if end, want := date.Add(time.Duration(secs)*time.Second), expiresAt.Truncate(time.Second); !end.Equal(want) {
		t.Errorf("X-Amz-Date + X-Amz-Expires = %s, want expiresAt %s", end, want)
	}
	if !strings.HasPrefix(q.Get("X-Amz-Credential"), awsstacktest.SignerKeyID+"/") || q.Get("X-Amz-Security-Token") != "" {
		t.Errorf("URL signed with %q (token %q), want the signing user %s", q.Get("X-Amz-Credential"),
			q.Get("X-Amz-Security-Token"), awsstacktest.SignerKeyID)
	}
	if !strings.HasSuffix(u.Path, "/"+awsstacktest.Bucket+"/"+key) {
		t.Errorf("URL path %s, want the object %s", u.Path, key)
	}
	resp, err := http.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	want, _, _ := env.S3.Object(t, awsstacktest.Bucket, key)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Errorf("GET of the download URL: %d, %d bytes; want 200 with the %d-byte video", resp.StatusCode, len(got), len(want))
	}
}

// multipartPart checks that the event's base64 body carries the stored
// image: the upload went through base64 decoding untouched.
func multipartPart(t *testing.T, ev events.APIGatewayProxyRequest, stored []byte) {
	t.Helper()
	if !ev.IsBase64Encoded {
		t.Fatal("image-to-video/testdata/event.json is not base64-encoded")
	}
	body, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, stored) {
		t.Error("the stored image is not the one in the event's multipart body")
	}
}

// dynamoOps is a reverse proxy in front of DynamoDB that records the
// operation (X-Amz-Target) of every request through it.
type dynamoOps struct {
	url    string
	mu     sync.Mutex
	writes []string
	reads  []string
}

func recordDynamoOps(t *testing.T, endpoint string) *dynamoOps {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	d := &dynamoOps{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		d.mu.Lock()
		switch op {
		case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
			d.writes = append(d.writes, op)
		default:
			d.reads = append(d.reads, op)
		}
		d.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d.url = srv.URL
	return d
}

// take returns the operations recorded since the last take.
func (d *dynamoOps) take() (writes, reads []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	writes, reads = d.writes, d.reads
	d.writes, d.reads = nil, nil
	return writes, reads
}
