package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/wire"
)

// fakeAPI answers the tools' calls from its fields and records them.
type fakeAPI struct {
	mu sync.Mutex
	// err, when set, is every call's answer.
	err error
	// statuses are the answers of Status, one per call, the last
	// repeated.
	statuses []client.Task
	polls    int
	// requests and images are what the starts and quotes were sent.
	requests []client.Request
	images   [][]byte
	uploads  []string
	keys     []string
	// extensions are the tasks the extensions and their quotes named,
	// with what they sent.
	extensions []string
	extends    []client.ExtendRequest
}

var _ mcpserver.API = (*fakeAPI)(nil)

func (f *fakeAPI) Models(context.Context) (*client.ModelList, error) {
	if f.err != nil {
		return nil, f.err
	}
	yes := true
	return &client.ModelList{DefaultModel: client.ModelFast, Models: []client.Model{{ID: client.ModelFast, Name: "Fast",
		Capabilities: []string{"text-to-video"}, Pricing: client.Pricing{CreditsPerVideo: 190, CreditsPerVideoNoAudio: 120}, Available: &yes,
		Limits: &client.Limits{Backend: "builtin", Modes: []string{"text-to-video"}, Durations: []int{8, 4, 6},
			Resolutions: map[string][]string{"8": {"1080p", "720p"}}, AspectRatios: []string{"16:9"}, MaxSampleCount: 2,
			PersonGeneration: map[string][]string{"text-to-video": {"allow_adult"}}, EnhancePrompt: []bool{true}}}}}, nil
}

// record keeps a start's request and its images' bytes.
func (f *fakeAPI) record(req client.Request, opts []client.StartOption, images ...client.Image) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	f.keys = append(f.keys, "")
	if len(opts) > 0 {
		f.keys[len(f.keys)-1] = "set"
	}
	for _, im := range images {
		if im.Open == nil {
			f.uploads = append(f.uploads, im.Name)
			continue
		}
		r, err := im.Open()
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(r)
		f.images = append(f.images, b)
	}
	return f.err
}

func (f *fakeAPI) started() (*client.Started, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &client.Started{TaskID: "gen_1_a", Status: client.StatusPending, CreditsUsed: 35, RemainingCredits: 65}, nil
}

func (f *fakeAPI) QuoteTextToVideo(_ context.Context, req client.Request) (*client.Quote, error) {
	if err := f.record(req, nil); err != nil {
		return nil, err
	}
	return &client.Quote{Endpoint: "text-to-video", CreditsRequired: 35, Allowed: true}, nil
}

func (f *fakeAPI) QuoteImageToVideo(_ context.Context, req client.Request, im client.Image) (*client.Quote, error) {
	if err := f.record(req, nil, im); err != nil {
		return nil, err
	}
	return &client.Quote{Endpoint: "image-to-video", CreditsRequired: 35, Allowed: true}, nil
}

func (f *fakeAPI) QuoteFirstLastFrame(_ context.Context, req client.Request, first, last client.Image) (*client.Quote, error) {
	if err := f.record(req, nil, first, last); err != nil {
		return nil, err
	}
	return &client.Quote{Endpoint: "first-last-frame", CreditsRequired: 35, Allowed: true}, nil
}

func (f *fakeAPI) QuoteExtend(_ context.Context, taskID string, req client.ExtendRequest) (*client.Quote, error) {
	if err := f.recordExtension(taskID, req, nil); err != nil {
		return nil, err
	}
	return &client.Quote{Endpoint: "extend", CreditsRequired: 500, Allowed: true}, nil
}

func (f *fakeAPI) Extend(_ context.Context, taskID string, req client.ExtendRequest, opts ...client.StartOption) (*client.Started, error) {
	if err := f.recordExtension(taskID, req, opts); err != nil {
		return nil, err
	}
	s, err := f.started()
	if s != nil {
		s.ExtendsTaskID = taskID
	}
	return s, err
}

// recordExtension keeps an extension's task and request.
func (f *fakeAPI) recordExtension(taskID string, req client.ExtendRequest, opts []client.StartOption) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extensions = append(f.extensions, taskID)
	f.extends = append(f.extends, req)
	f.keys = append(f.keys, "")
	if len(opts) > 0 {
		f.keys[len(f.keys)-1] = "set"
	}
	return f.err
}

func (f *fakeAPI) TextToVideo(_ context.Context, req client.Request, opts ...client.StartOption) (*client.Started, error) {
	if err := f.record(req, opts); err != nil {
		return nil, err
	}
	return f.started()
}

func (f *fakeAPI) ImageToVideo(_ context.Context, req client.Request, im client.Image, opts ...client.StartOption) (*client.Started, error) {
	if err := f.record(req, opts, im); err != nil {
		return nil, err
	}
	return f.started()
}

func (f *fakeAPI) FirstLastFrame(_ context.Context, req client.Request, first, last client.Image, opts ...client.StartOption) (*client.Started, error) {
	if err := f.record(req, opts, first, last); err != nil {
		return nil, err
	}
	return f.started()
}

func (f *fakeAPI) Status(_ context.Context, id string) (*client.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	t := f.statuses[min(f.polls, len(f.statuses)-1)]
	f.polls++
	t.TaskID = id
	return &t, nil
}

func (f *fakeAPI) Cancel(_ context.Context, id string) (*client.Task, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &client.Task{TaskID: id, Status: client.StatusFailed, Error: &client.Failure{Code: "CANCELLED"}, CreditsRefunded: new(35)}, nil
}

func (f *fakeAPI) History(context.Context, client.HistoryQuery) (*client.HistoryPage, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &client.HistoryPage{Items: []client.HistoryItem{{TaskID: "gen_1_a", Status: client.StatusCompleted, CreditsCost: 35}}, Pagination: client.Pagination{Total: 1, Limit: 20}}, nil
}

func (f *fakeAPI) Credits(context.Context, client.CreditsQuery) (*client.Credits, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &client.Credits{Balance: 65, Pagination: wire.LedgerPagination{NextCursor: "c2"}}, nil
}

// fakeFetcher serves images by URL from a map.
type fakeFetcher map[string][]byte

func (f fakeFetcher) Fetch(_ context.Context, url string, limit int64) ([]byte, string, error) {
	b, ok := f[url]
	if !ok {
		return nil, "", &webhook.URLError{Reason: "host \"nowhere.example\" does not resolve"}
	}
	return b[:min(int64(len(b)), limit)], "image/png", nil
}

// connect serves the tools over api to an in-memory client.
func connect(t *testing.T, api mcpserver.API, opts mcpserver.Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(api, opts).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool with arguments (JSON) and returns its result and
// structured content.
func call(t *testing.T, cs *mcp.ClientSession, name, args string) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	var sc map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &sc)
	return res, sc
}

func TestToolsHaveSchemas(t *testing.T) {
	cs := connect(t, &fakeAPI{}, mcpserver.Options{}, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) || !strings.Contains(string(out), `"error"`) {
			t.Errorf("%s: input schema %s, output schema %s; want objects, the output's with error", tool.Name, in, out)
		}
		if tool.Description == "" || tool.Annotations == nil || tool.Annotations.Title == "" {
			t.Errorf("%s has no description or title", tool.Name)
		}
	}
	want := []string{mcpserver.ToolListModels, mcpserver.ToolQuote, mcpserver.ToolTextToVideo, mcpserver.ToolImageToVideo,
		mcpserver.ToolFirstLastFrame, mcpserver.ToolGetTask, mcpserver.ToolWaitForTask, mcpserver.ToolCancelTask,
		mcpserver.ToolHistory, mcpserver.ToolCredits, mcpserver.ToolExtendVideo}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// Every tool answers its output, as structured content its schema
// describes (the server checks it) and as text.
func TestToolsAnswer(t *testing.T) {
	api := &fakeAPI{statuses: []client.Task{{Status: client.StatusPending}}}
	cs := connect(t, api, mcpserver.Options{}, nil)
	for _, tc := range []struct {
		tool, args, member string
	}{
		{mcpserver.ToolListModels, `{}`, "models"},
		{mcpserver.ToolQuote, `{"mode":"text-to-video","prompt":"a boat"}`, "quote"},
		{mcpserver.ToolTextToVideo, `{"prompt":"a boat","durationSeconds":4,"generateAudio":false,"seed":null}`, "started"},
		{mcpserver.ToolExtendVideo, `{"taskId":"gen_1_a","prompt":"and on","resolution":"720p"}`, "started"},
		{mcpserver.ToolQuote, `{"mode":"extend","taskId":"gen_1_a","prompt":"and on"}`, "quote"},
		{mcpserver.ToolGetTask, `{"taskId":"gen_1_a"}`, "task"},
		{mcpserver.ToolCancelTask, `{"taskId":"gen_1_a"}`, "task"},
		{mcpserver.ToolHistory, `{"limit":5}`, "history"},
		{mcpserver.ToolCredits, `{}`, "credits"},
	} {
		res, sc := call(t, cs, tc.tool, tc.args)
		if res.IsError || sc[tc.member] == nil {
			t.Errorf("%s(%s) = %+v, want a result with %s", tc.tool, tc.args, sc, tc.member)
			continue
		}
		if text, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(text.Text, `"`+tc.member+`"`) {
			t.Errorf("%s: first content %+v, want the JSON", tc.tool, res.Content[0])
		}
	}
	if len(api.requests) < 2 || api.requests[1].DurationSeconds != 4 || api.requests[1].GenerateAudio == nil || *api.requests[1].GenerateAudio ||
		api.requests[1].Seed != nil {
		t.Errorf("the start sent %+v", api.requests)
	}
}

// Every refusal is a tool error naming the contract's code and field,
// with nothing sent when the input itself is at fault.
func TestRefusals(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	for _, tc := range []struct {
		name, tool, args string
		apiErr           error
		code, field      string
		retryAfter       int
	}{
		{"unknown member", mcpserver.ToolTextToVideo, `{"prompt":"a","duration":4}`, nil, client.CodeValidation, "duration", 0},
		{"wrong type", mcpserver.ToolTextToVideo, `{"prompt":"a","durationSeconds":"four"}`, nil, client.CodeValidation, "durationSeconds", 0},
		{"repeated member", mcpserver.ToolTextToVideo, `{"prompt":"a","prompt":"b"}`, nil, client.CodeValidation, "prompt", 0},
		{"not an object", mcpserver.ToolGetTask, `[1]`, nil, client.CodeValidation, "", 0},
		{"no image", mcpserver.ToolImageToVideo, `{"prompt":"a"}`, nil, client.CodeValidation, "image", 0},
		{"two sources", mcpserver.ToolImageToVideo, `{"prompt":"a","image":{"url":"https://x.example/a.png","uploadId":"upl_1"}}`, nil, client.CodeValidation, "image", 0},
		{"bad base64", mcpserver.ToolFirstLastFrame, `{"prompt":"a","firstFrame":{"uploadId":"upl_1"},"lastFrame":{"base64":"%%%"}}`, nil, client.CodeValidation, "lastFrame", 0},
		{"URL refused", mcpserver.ToolImageToVideo, `{"prompt":"a","image":{"url":"https://nowhere.example/a.png"}}`, nil, client.CodeValidation, "image", 0},
		{"unknown mode", mcpserver.ToolQuote, `{"mode":"text","prompt":"a"}`, nil, client.CodeValidation, "mode", 0},
		{"image for text", mcpserver.ToolQuote, `{"mode":"text-to-video","prompt":"a","image":{"uploadId":"upl_1"}}`, nil, client.CodeValidation, "image", 0},
		{"reference images for an image", mcpserver.ToolQuote, `{"mode":"image-to-video","prompt":"a","image":{"uploadId":"upl_1"},"referenceImages":["upl_2"]}`, nil, client.CodeValidation, "referenceImages", 0},
		{"a task for text", mcpserver.ToolQuote, `{"mode":"text-to-video","prompt":"a","taskId":"gen_1_a"}`, nil, client.CodeValidation, "taskId", 0},
		{"a model for an extension", mcpserver.ToolQuote, `{"mode":"extend","taskId":"gen_1_a","prompt":"a","model":"gen-3.1-lite-generate-001"}`, nil, client.CodeValidation, "model", 0},
		{"an extension's quote without its task", mcpserver.ToolQuote, `{"mode":"extend","prompt":"a"}`, nil, client.CodeValidation, "taskId", 0},
		{"an extension without its task", mcpserver.ToolExtendVideo, `{"prompt":"a"}`, nil, client.CodeValidation, "taskId", 0},
		{"an extension's aspect ratio", mcpserver.ToolExtendVideo, `{"taskId":"gen_1_a","prompt":"a","aspectRatio":"9:16"}`, nil, client.CodeValidation, "aspectRatio", 0},
		{"reference images as files", mcpserver.ToolTextToVideo, `{"prompt":"a","referenceImages":[{"uploadId":"upl_1"}]}`, nil, client.CodeValidation, "referenceImages", 0},
		{"extension of an unknown task", mcpserver.ToolExtendVideo, `{"taskId":"gen_1_b","prompt":"a"}`,
			&client.Error{Status: 404, Code: client.CodeTaskNotFound, Message: "Task not found"}, client.CodeTaskNotFound, "", 0},
		{"extension of a failed task", mcpserver.ToolExtendVideo, `{"taskId":"gen_1_b","prompt":"a"}`,
			&client.Error{Status: 400, Code: client.CodeValidation, Message: "Task gen_1_b is failed", Field: "taskId"}, client.CodeValidation, "taskId", 0},
		{"negative wait", mcpserver.ToolWaitForTask, `{"taskId":"gen_1_a","timeoutSeconds":-1}`, nil, client.CodeValidation, "timeoutSeconds", 0},
		{"service's validation", mcpserver.ToolTextToVideo, `{"prompt":"a","durationSeconds":5}`,
			&client.Error{Status: 400, Code: client.CodeValidation, Message: "durationSeconds must be 4, 6 or 8", Field: "durationSeconds"},
			client.CodeValidation, "durationSeconds", 0},
		{"no credits", mcpserver.ToolImageToVideo, `{"prompt":"a","image":{"base64":"` + b64(png) + `"}}`,
			&client.Error{Status: 402, Code: client.CodeInsufficientCredits, Message: "Insufficient credits", Required: 35, Available: 10},
			client.CodeInsufficientCredits, "", 0},
		{"rate limit", mcpserver.ToolGetTask, `{"taskId":"gen_1_a"}`,
			&client.Error{Status: 429, Code: client.CodeRateLimit, Message: "Rate limit exceeded", RetryAfter: 1500 * time.Millisecond},
			client.CodeRateLimit, "", 2},
		{"not found", mcpserver.ToolWaitForTask, `{"taskId":"gen_1_b"}`,
			&client.Error{Status: 404, Code: client.CodeTaskNotFound, Message: "Task not found"}, client.CodeTaskNotFound, "", 0},
		{"a proxy's page", mcpserver.ToolListModels, `{}`, &client.Error{Status: 502, Message: "Bad Gateway"}, client.CodeUnavailable, "", 0},
		{"unreachable", mcpserver.ToolHistory, `{}`, errors.New("dial tcp 127.0.0.1:1: connection refused"), client.CodeUnavailable, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{err: tc.apiErr}
			cs := connect(t, api, mcpserver.Options{Fetcher: fakeFetcher{}}, nil)
			res, sc := call(t, cs, tc.tool, tc.args)
			e, _ := sc["error"].(map[string]any)
			if !res.IsError || e["code"] != tc.code || (e["field"] != nil || tc.field != "") && e["field"] != tc.field {
				t.Fatalf("%s(%s) = isError %v, %v; want %s on field %q", tc.tool, tc.args, res.IsError, sc, tc.code, tc.field)
			}
			if got, _ := e["retryAfterSeconds"].(float64); int(got) != tc.retryAfter {
				t.Errorf("retryAfterSeconds = %v, want %d", e["retryAfterSeconds"], tc.retryAfter)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, tc.code) || tc.field != "" && !strings.Contains(text, tc.field) {
				t.Errorf("text %q does not name %s and %q", text, tc.code, tc.field)
			}
			if tc.apiErr == nil && len(api.requests)+len(api.extensions)+api.polls > 0 {
				t.Errorf("an input refused before the service was sent: %d requests, %d polls", len(api.requests), api.polls)
			}
		})
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Images by URL, base64 and upload id reach the start as bytes or as
// the upload's id.
func TestImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfirst")
	api := &fakeAPI{}
	cs := connect(t, api, mcpserver.Options{Fetcher: fakeFetcher{"https://img.example/first.png": png}}, nil)
	res, sc := call(t, cs, mcpserver.ToolFirstLastFrame, `{"prompt":"a","idempotencyKey":"k1",
		"firstFrame":{"url":"https://img.example/first.png"},"lastFrame":{"base64":"data:image/png;base64,`+b64([]byte("last"))+`"}}`)
	if res.IsError {
		t.Fatalf("first-last-frame: %+v", sc)
	}
	call(t, cs, mcpserver.ToolImageToVideo, `{"prompt":"a","image":{"uploadId":"upl_abc"}}`)
	if len(api.images) != 2 || string(api.images[0]) != string(png) || string(api.images[1]) != "last" {
		t.Errorf("images sent %q, want the fetched one then the decoded one", api.images)
	}
	if !slices.Equal(api.uploads, []string{"upl_abc"}) || !slices.Equal(api.keys, []string{"set", ""}) {
		t.Errorf("uploads %v, idempotency keys %v", api.uploads, api.keys)
	}
}

// wait_for_task sends a progress notification each time the task moves
// on, never going back, and answers the finished task with a link to
// each video.
func TestWaitSendsProgress(t *testing.T) {
	exp := wire.TimeOf(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	api := &fakeAPI{statuses: []client.Task{
		{Status: client.StatusPending},
		{Status: client.StatusProcessing, Progress: 40},
		{Status: client.StatusProcessing, Progress: 40},
		{Status: client.StatusProcessing, Progress: 80},
		{Status: client.StatusCompleted, Videos: []client.Video{{URL: "https://media.example/v.mp4", MimeType: "video/mp4",
			ExpiresAt: exp, PosterURL: "https://media.example/v.jpg"}}},
	}}
	var mu sync.Mutex
	var got []float64
	cs := connect(t, api, mcpserver.Options{MinPoll: time.Millisecond, MaxPoll: 5 * time.Millisecond}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, req.Params.Progress)
		}})
	params := &mcp.CallToolParams{Name: mcpserver.ToolWaitForTask, Arguments: map[string]any{"taskId": "gen_1_a"}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("wait: %+v, %v", res, err)
	}
	var out mcpserver.TaskOutput
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if out.Finished == nil || !*out.Finished || out.Task == nil || out.Task.Status != client.StatusCompleted || len(out.Task.Videos) != 1 {
		t.Errorf("wait answered %s", b)
	}
	var links []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links = append(links, l.URI+" "+l.MIMEType)
		}
	}
	if !slices.Equal(links, []string{"https://media.example/v.mp4 video/mp4", "https://media.example/v.jpg image/jpeg"}) {
		t.Errorf("links %v", links)
	}
	// Notifications may arrive after the answer: wait for them a moment.
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []float64{0, 40, 80, 100}) {
		t.Errorf("progress %v, want 0, 40, 80, 100", got)
	}
}

// A wait that runs out of time answers the task as it is, unfinished.
func TestWaitRunsOut(t *testing.T) {
	api := &fakeAPI{statuses: []client.Task{{Status: client.StatusProcessing, Progress: 10}}}
	cs := connect(t, api, mcpserver.Options{MinPoll: 10 * time.Millisecond, MaxWait: 50 * time.Millisecond}, nil)
	start := time.Now()
	res, sc := call(t, cs, mcpserver.ToolWaitForTask, `{"taskId":"gen_1_a","timeoutSeconds":60}`)
	if res.IsError || sc["finished"] != false || sc["task"].(map[string]any)["status"] != "processing" {
		t.Errorf("wait answered %v", sc)
	}
	if d := time.Since(start); d > 2*time.Second || api.polls < 2 {
		t.Errorf("the wait took %s and %d polls, want about MaxWait's 50ms", d, api.polls)
	}
}

// keys is a Keys of one live key, or an outage.
type keys struct {
	live string
	err  error
}

func (k keys) CheckKey(_ context.Context, key string) (bool, error) { return key == k.live, k.err }

// The remote endpoint answers 405, 401 with its challenge, and 503
// before reading any message, and passes the caller's key to the REST
// API it calls in-process.
func TestHandler(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-API-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/gen/models" {
			w.WriteHeader(404)
			w.Write([]byte(`{"success":false,"error":"TASK_NOT_FOUND","message":"Task not found"}`))
			return
		}
		w.Write([]byte(`{"success":true,"models":[{"modelId":"gen-3.1-fast-generate-001","name":"Fast","description":"","capabilities":[],"pricing":{"creditsPerVideo":1,"creditsPerVideoNoAudio":1}}]}`))
	})
	k := &keys{live: "gen_live"}
	srv := httptest.NewServer(mcpserver.NewHandler(mcpserver.HTTPConfig{API: rest, Keys: k}))
	defer srv.Close()

	for _, tc := range []struct {
		name, method, auth string
		outage             bool
		status             int
		challenge          string
	}{
		{"not JSON", "text", "Bearer gen_live", false, 415, ""},
		{"not a stream", "accept", "Bearer gen_live", false, 400, ""},
		{"GET", http.MethodGet, "Bearer gen_live", false, 405, ""},
		{"DELETE", http.MethodDelete, "", false, 405, ""},
		{"no key", http.MethodPost, "", false, 401, mcpserver.ChallengeMissing},
		{"not bearer", http.MethodPost, "Basic gen_live", false, 401, mcpserver.ChallengeInvalid},
		{"wrong key", http.MethodPost, "Bearer gen_other", false, 401, mcpserver.ChallengeInvalid},
		{"store down", http.MethodPost, "Bearer gen_live", true, 503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k.err = nil
			if tc.outage {
				k.err = errors.New("store down")
			}
			method := tc.method
			if method == "text" || method == "accept" {
				method = http.MethodPost
			}
			req, _ := http.NewRequest(method, srv.URL+mcpserver.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			switch tc.method {
			case "text":
				req.Header.Set("Content-Type", "text/plain")
			case "accept":
				req.Header.Set("Accept", "application/json")
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct{ Error string }
			json.NewDecoder(res.Body).Decode(&body)
			if res.StatusCode != tc.status || res.Header.Get("WWW-Authenticate") != tc.challenge || body.Error == "" ||
				res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s = %d, WWW-Authenticate %q, error %q; want %d, %q", tc.name, res.StatusCode,
					res.Header.Get("WWW-Authenticate"), body.Error, tc.status, tc.challenge)
			}
			if tc.status == 405 && res.Header.Get("Allow") != "POST" {
				t.Errorf("405 without Allow: POST")
			}
		})
	}
	k.err = nil
	if len(seen) > 0 {
		t.Errorf("the REST API was called before the key was checked: %v", seen)
	}

	ctx := t.Context()
	hc := &http.Client{Transport: bearerTransport{"gen_live"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + mcpserver.Path, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, sc := call(t, cs, mcpserver.ToolListModels, `{}`)
	if res.IsError || len(sc["models"].([]any)) != 1 {
		t.Errorf("list_models = %v", sc)
	}
	res, sc = call(t, cs, mcpserver.ToolGetTask, `{"taskId":"gen_1_x"}`)
	if e, _ := sc["error"].(map[string]any); !res.IsError || e["code"] != client.CodeTaskNotFound || e["status"] != float64(404) {
		t.Errorf("get_task of an unknown task = %v", sc)
	}
	want := []string{"GET /api/gen/models gen_live", "GET /api/gen/status/gen_1_x gen_live"}
	if !slices.Equal(seen, want) {
		t.Errorf("the REST API saw %v, want %v", seen, want)
	}
}

// bearerTransport sends a bearer token.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// A wait whose caller left (its HTTP request gone) stops looking at the
// task, rather than spending the key's requests until its timeout.
func TestWaitStopsWhenTheCallerLeaves(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		polls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"success":true,"taskId":"gen_1_a","status":"processing","progress":10}`))
	})
	srv := httptest.NewServer(mcpserver.NewHandler(mcpserver.HTTPConfig{API: rest, Keys: keys{live: "gen_live"},
		Options: mcpserver.Options{MinPoll: 10 * time.Millisecond, MaxPoll: 10 * time.Millisecond}}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+mcpserver.Path, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_for_task","arguments":{"taskId":"gen_1_a","timeoutSeconds":30}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer gen_live")
	if res, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, res.Body) // the caller leaves as the body comes
		res.Body.Close()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return polls
	}
	time.Sleep(200 * time.Millisecond)
	left := count()
	time.Sleep(300 * time.Millisecond)
	if left == 0 || count() != left {
		t.Errorf("polls: %d when the caller had left, %d a while after; want some, then no more", left, count())
	}
}

// Reference images reach text-to-video and its quote as upload ids;
// extend_video and its quote send the task and the extension's
// parameters, and the start its idempotency key.
func TestReferenceImagesAndExtension(t *testing.T) {
	api := &fakeAPI{}
	cs := connect(t, api, mcpserver.Options{}, nil)
	refs := []string{"upl_1", "upl_2"}
	for _, tc := range []struct{ tool, args string }{
		{mcpserver.ToolTextToVideo, `{"prompt":"the fox","model":"gen-3.1-generate-001","referenceImages":["upl_1","upl_2"]}`},
		{mcpserver.ToolQuote, `{"mode":"text-to-video","prompt":"the fox","referenceImages":["upl_1","upl_2"]}`},
	} {
		if res, sc := call(t, cs, tc.tool, tc.args); res.IsError {
			t.Fatalf("%s(%s) = %v", tc.tool, tc.args, sc)
		}
	}
	if len(api.requests) != 2 || !slices.Equal(api.requests[0].ReferenceImages, refs) || !slices.Equal(api.requests[1].ReferenceImages, refs) ||
		api.requests[0].Model != client.ModelQuality {
		t.Errorf("requests %+v, want both with the reference images %v", api.requests, refs)
	}

	res, sc := call(t, cs, mcpserver.ToolExtendVideo, `{"taskId":"gen_1_src","prompt":"and then it dances","resolution":"720p",
		"generateAudio":false,"seed":7,"negativePrompt":"rain","idempotencyKey":"k1"}`)
	started, _ := sc["started"].(map[string]any)
	if res.IsError || started["extendsTaskId"] != "gen_1_src" {
		t.Fatalf("extend_video = %v, want the start of the extension of gen_1_src", sc)
	}
	call(t, cs, mcpserver.ToolQuote, `{"mode":"extend","taskId":"gen_1_src","prompt":"and then it dances"}`)
	if !slices.Equal(api.extensions, []string{"gen_1_src", "gen_1_src"}) || len(api.extends) != 2 {
		t.Fatalf("extensions %v, want the start and the quote of gen_1_src's", api.extensions)
	}
	x := api.extends[0]
	if x.Prompt != "and then it dances" || x.Resolution != "720p" || x.GenerateAudio == nil || *x.GenerateAudio ||
		x.Seed == nil || *x.Seed != 7 || x.NegativePrompt != "rain" {
		t.Errorf("extension sent %+v, want the tool's parameters", x)
	}
	if !slices.Equal(api.keys, []string{"", "", "set", ""}) {
		t.Errorf("idempotency keys %v, want the extension's alone", api.keys)
	}
}
