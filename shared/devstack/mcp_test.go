package devstack

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/rendertest"
)

// mcpConfigBlock is the README's config block for an MCP host: the
// first json block of its MCP section, as a reader pastes it.
func mcpConfigBlock(t *testing.T) mcpHostConfig {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## MCP for agents")
	if !ok {
		t.Fatal(`README.md has no "## MCP for agents" section`)
	}
	_, block, ok := strings.Cut(after, "\n```json\n")
	if !ok {
		t.Fatal("the MCP section has no json block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the MCP section's json block does not end")
	}
	var cfg struct {
		MCPServers map[string]mcpHostConfig `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("the README's MCP config block is not JSON: %v\n%s", err, block)
	}
	server, ok := cfg.MCPServers["gen"]
	if !ok || len(cfg.MCPServers) != 1 {
		t.Fatalf("the README's MCP config block names %v, want the one server gen", cfg.MCPServers)
	}
	return server
}

// mcpHostConfig is one server of an MCP host's mcpServers.
type mcpHostConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// mcpCall is what testdata/mcp-sdk.cjs got of one tool call.
type mcpCall struct {
	IsError    bool
	Structured map[string]any
	Content    []map[string]any
	Threw      string
	Code       any
}

// refusal is the call's structured error.
func (c mcpCall) refusal() map[string]any {
	e, _ := c.Structured["error"].(map[string]any)
	return e
}

// mcpRun is one transport's run of testdata/mcp-sdk.cjs.
type mcpRun struct {
	Server struct{ Name string }
	Tools  []struct{ Name, Input, Output string }
	Models mcpCall
	// Started and Waited are the start and the wait, whose progress
	// notifications are Progress.
	Started, Waited mcpCall
	TaskID          string
	Progress        []struct{ Progress, Total float64 }
	Links           []struct{ URI, MimeType string }
	Download        struct {
		Status            int
		ContentType, File string
	}
	Log string
}

// mcpReport is what testdata/mcp-sdk.cjs writes.
type mcpReport struct {
	Runs     map[string]mcpRun
	Refusals struct {
		NoCredits, BadParameter, WrongType, OtherTenant, SpendingCap mcpCall
		// StartRate and RequestRate are a list of calls, or what
		// connecting threw.
		StartRate, RequestRate json.RawMessage
	}
	StdioRefusals struct{ BadParameter, NotFound mcpCall }
	WrongKey      struct {
		Threw string
		Code  any
	}
}

// TestMCPWithTheTypeScriptSDK drives gen's MCP server with the official
// TypeScript SDK over both transports, against the stack as `make run`
// builds it (or the AWS assembly with GEN_E2E_STACK=aws-local): the
// `gen mcp` stdio server started as a host starts it, a child process
// from the README's config block, and the service's /mcp with a bearer
// key. Each initializes, lists the tools, starts a generation, hears
// its progress while waiting, and downloads an MP4 of the asked
// duration from the link it gets; the charge is the contract's, in
// /api/gen/history. Then the refusals: no credits, a bad parameter
// (named), the rate limits, another account's task, a spending cap, a
// wrong key.
func TestMCPWithTheTypeScriptSDK(t *testing.T) {
	tools := nodetools.Require(t, nodetools.MCPPackage)
	e := startEnv(t, "", nil)
	const model, duration = "gen-3.1-lite-generate-001", 4
	m, _ := catalog.Lookup(model)
	price := int64(m.Price(false))
	k := e.key(10000, store.KeyLimits{})
	poor := e.key(price-1, store.KeyLimits{})
	capped := e.key(10000, store.KeyLimits{})
	setCaps(t, e.store, capped.KeyID, price-1, 0)
	startLimited := e.key(10000, store.KeyLimits{RequestsPerMinute: 1000, RequestsPerDay: 10000, StartsPerMinute: 1, MaxInFlight: 5})
	requestLimited := e.key(10000, store.KeyLimits{RequestsPerMinute: 2, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 5})
	other := e.key(10000, store.KeyLimits{})
	o := e.postJSON("/api/gen/text-to-video", other.APIKey, `{"prompt":"another account's","model":"`+model+`","durationSeconds":4,"generateAudio":false}`)
	if o.status != http.StatusAccepted {
		t.Fatalf("the other account's start = %d: %s", o.status, o.raw)
	}

	// The stdio server as the README tells a host to start it: `gen` on
	// the PATH, the key and the service's address in its env.
	host := mcpConfigBlock(t)
	if host.Command != "gen" || !slices.Equal(host.Args, []string{"mcp"}) {
		t.Fatalf("the README's config block runs %s %v, want gen mcp", host.Command, host.Args)
	}
	for _, name := range []string{"GEN_API_KEY", "GEN_BASE_URL"} {
		if _, ok := host.Env[name]; !ok || len(host.Env) != 2 {
			t.Fatalf("the README's config block sets %v, want GEN_API_KEY and GEN_BASE_URL", host.Env)
		}
	}
	host.Env["GEN_API_KEY"], host.Env["GEN_BASE_URL"] = k.APIKey, e.url
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "gen"), "github.com/genvideo/gen/infra/gen").CombinedOutput(); err != nil {
		t.Fatalf("go build ./infra/gen: %v\n%s", err, out)
	}

	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{
		"stdio": host, "mcpURL": e.url + mcpserver.Path, "key": k.APIKey, "poorKey": poor.APIKey, "cappedKey": capped.APIKey,
		"startLimitedKey": startLimited.APIKey, "requestLimitedKey": requestLimited.APIKey, "otherTaskID": str(o.body["taskId"]),
		"model": model, "duration": duration, "dir": dir,
	})
	script, _ := filepath.Abs("testdata/mcp-sdk.cjs")
	cmd := tools.Command(t.Context(), script)
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(string(cfg))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-sdk.cjs: %v\n%s", err, stderr.String())
	}
	var rep mcpReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if strings.Contains(string(out), k.APIKey) {
		t.Errorf("the report carries the key")
	}

	wantTools := []string{mcpserver.ToolCancelTask, mcpserver.ToolCredits, mcpserver.ToolExtendVideo, mcpserver.ToolFirstLastFrame, mcpserver.ToolGetTask,
		mcpserver.ToolHistory, mcpserver.ToolImageToVideo, mcpserver.ToolListModels, mcpserver.ToolQuote,
		mcpserver.ToolTextToVideo, mcpserver.ToolWaitForTask}
	slices.Sort(wantTools)
	costs := map[string]int64{}
	h := e.do(http.MethodGet, "/api/gen/history?limit=100", k.APIKey, "", nil)
	for _, v := range h.body["videos"].([]any) {
		m := v.(map[string]any)
		costs[str(m["taskId"])] = num(m["creditsCost"])
	}
	for _, kind := range []string{"stdio", "http"} {
		run, ok := rep.Runs[kind]
		if !ok {
			t.Errorf("%s: no run", kind)
			continue
		}
		var names []string
		for _, tool := range run.Tools {
			names = append(names, tool.Name)
			if tool.Input != "object" || tool.Output != "object" {
				t.Errorf("%s: tool %s has input schema %q, output schema %q", kind, tool.Name, tool.Input, tool.Output)
			}
		}
		slices.Sort(names)
		if run.Server.Name != "gen" || !slices.Equal(names, wantTools) {
			t.Errorf("%s: server %q lists %v, want %v", kind, run.Server.Name, names, wantTools)
		}
		if run.Models.IsError || len(run.Models.Structured["models"].([]any)) == 0 {
			t.Errorf("%s: list_models = %+v", kind, run.Models)
		}
		started, _ := run.Started.Structured["started"].(map[string]any)
		if run.Started.IsError || run.TaskID == "" || num(started["creditsUsed"]) != price {
			t.Fatalf("%s: start = %+v, want a task charged %d", kind, run.Started, price)
		}
		task, _ := run.Waited.Structured["task"].(map[string]any)
		if run.Waited.IsError || run.Waited.Structured["finished"] != true || str(task["status"]) != "completed" {
			t.Fatalf("%s: wait = %+v", kind, run.Waited)
		}
		// Progress came while the task moved (a render takes seconds;
		// the wait begins within milliseconds of the start), of 100, each
		// above the last. The server sends 100 too, just before the
		// result, but the pinned SDK hands a notification to its handler
		// a microtask late and drops one that its result overtook
		// (@modelcontextprotocol/sdk dist/cjs/shared/protocol.js, _onnotification and
		// _onresponse): it may or may not be heard.
		n := len(run.Progress)
		if n == 0 || run.Progress[0].Progress >= 100 {
			t.Errorf("%s: progress %+v, want notifications while the task was unfinished", kind, run.Progress)
		}
		for i, p := range run.Progress {
			if p.Total != 100 || p.Progress > 100 || i > 0 && p.Progress <= run.Progress[i-1].Progress {
				t.Errorf("%s: progress %+v, want each of 100 and above the last", kind, run.Progress)
				break
			}
		}
		videos, _ := task["videos"].([]any)
		if len(videos) != 1 || len(run.Links) == 0 || run.Links[0].URI != str(videos[0].(map[string]any)["url"]) || run.Links[0].MimeType != "video/mp4" {
			t.Errorf("%s: videos %v, links %+v; want the video's link as the first resource link", kind, videos, run.Links)
		}
		if run.Download.Status != http.StatusOK || run.Download.ContentType != "video/mp4" {
			t.Fatalf("%s: the link answered %+v", kind, run.Download)
		}
		if d := rendertest.Probe(t, run.Download.File).Duration; math.Abs(d-duration) > 0.15 {
			t.Errorf("%s: the video lasts %.2f s, want the asked %d", kind, d, duration)
		}
		// The charge is the contract's, in the contract's history.
		if costs[run.TaskID] != price || num(task["creditsCost"]) != price {
			t.Errorf("%s: task %s costs %d in history, %d through MCP; want %d", kind, run.TaskID, costs[run.TaskID], num(task["creditsCost"]), price)
		}
	}
	if strings.Contains(rep.Runs["stdio"].Log, k.APIKey) {
		t.Errorf("gen mcp's log carries the key")
	}
	if got := e.balance(k.AccountID); got != 10000-2*price {
		t.Errorf("balance %d, want %d: two starts charged, the refused ones not", got, 10000-2*price)
	}

	for _, c := range []struct {
		name        string
		call        mcpCall
		code, field string
	}{
		{"no credits", rep.Refusals.NoCredits, "INSUFFICIENT_CREDITS", ""},
		{"a bad parameter", rep.Refusals.BadParameter, "VALIDATION_ERROR", "durationSeconds"},
		{"a parameter of the wrong type", rep.Refusals.WrongType, "VALIDATION_ERROR", "durationSeconds"},
		{"another account's task", rep.Refusals.OtherTenant, "TASK_NOT_FOUND", ""},
		{"a spending cap", rep.Refusals.SpendingCap, "SPENDING_CAP_EXCEEDED", ""},
		{"a bad parameter over stdio", rep.StdioRefusals.BadParameter, "VALIDATION_ERROR", "durationSeconds"},
		{"another account's task over stdio", rep.StdioRefusals.NotFound, "TASK_NOT_FOUND", ""},
	} {
		r := c.call.refusal()
		if !c.call.IsError || c.call.Threw != "" || str(r["code"]) != c.code || str(r["field"]) != c.field {
			t.Errorf("%s: %+v; want a tool error %s on field %q", c.name, c.call, c.code, c.field)
		}
		if text, _ := c.call.Content[0]["text"].(string); !strings.Contains(text, c.code) {
			t.Errorf("%s: the text %q does not name %s", c.name, text, c.code)
		}
	}
	if r := rep.Refusals.NoCredits.refusal(); num(r["required"]) != price || num(r["available"]) != price-1 {
		t.Errorf("no credits: %v, want required %d, available %d", r, price, price-1)
	}
	// The service's limits are tool errors: the second start of a key
	// allowed one a minute, and on the local stack the third request of
	// a key allowed two a minute. On AWS the key's usage plan holds the
	// MCP requests themselves to its rate before the function runs: the
	// host's SDK gets API Gateway's 429 with the contract's body.
	var starts, requests []mcpCall
	if err := json.Unmarshal(rep.Refusals.StartRate, &starts); err != nil || len(starts) != 2 || starts[0].IsError || !starts[1].IsError ||
		str(starts[1].refusal()["code"]) != "RATE_LIMIT_EXCEEDED" || num(starts[1].refusal()["retryAfterSeconds"]) <= 0 {
		t.Errorf("starts per minute: %s; want a start, then RATE_LIMIT_EXCEEDED with retryAfterSeconds", rep.Refusals.StartRate)
	}
	if e.aws != nil {
		var threw struct{ Threw string }
		if err := json.Unmarshal(rep.Refusals.RequestRate, &threw); err != nil || !strings.Contains(threw.Threw, "RATE_LIMIT_EXCEEDED") {
			t.Errorf("requests per minute on AWS: %s; want API Gateway's 429 RATE_LIMIT_EXCEEDED", rep.Refusals.RequestRate)
		}
	} else if err := json.Unmarshal(rep.Refusals.RequestRate, &requests); err != nil || len(requests) != 3 || requests[0].IsError || requests[1].IsError ||
		!requests[2].IsError || str(requests[2].refusal()["code"]) != "RATE_LIMIT_EXCEEDED" || num(requests[2].refusal()["retryAfterSeconds"]) <= 0 {
		t.Errorf("requests per minute: %s; want two answers, then RATE_LIMIT_EXCEEDED with retryAfterSeconds", rep.Refusals.RequestRate)
	}
	if rep.WrongKey.Threw == "" || rep.WrongKey.Code != float64(http.StatusUnauthorized) {
		t.Errorf("a wrong key: %+v, want the transport's 401", rep.WrongKey)
	}
	for _, acct := range []string{poor.AccountID, capped.AccountID} {
		if b := e.balance(acct); b != map[string]int64{poor.AccountID: price - 1, capped.AccountID: 10000}[acct] {
			t.Errorf("account %s: balance %d after a refused start", acct, b)
		}
	}
}

// TestMCPEndpoint: /mcp answers a request without a live key 401 with a
// Bearer challenge, before reading it, and GET and DELETE 405, as a
// stateless Streamable HTTP server does.
func TestMCPEndpoint(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(100, store.KeyLimits{})
	for _, c := range []struct {
		name, method, auth string
		status             int
		challenge          string
	}{
		{"no key", http.MethodPost, "", http.StatusUnauthorized, mcpserver.ChallengeMissing},
		{"X-API-Key is not the scheme", http.MethodPost, "x-api-key", http.StatusUnauthorized, mcpserver.ChallengeMissing},
		{"a wrong key", http.MethodPost, "Bearer gen_" + strings.Repeat("0", 40), http.StatusUnauthorized, mcpserver.ChallengeInvalid},
		{"GET", http.MethodGet, "Bearer " + k.APIKey, http.StatusMethodNotAllowed, ""},
		{"DELETE", http.MethodDelete, "Bearer " + k.APIKey, http.StatusMethodNotAllowed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.url+mcpserver.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			switch {
			case c.auth == "x-api-key":
				req.Header.Set("X-API-Key", k.APIKey)
			case c.auth != "":
				req.Header.Set("Authorization", c.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct{ Error string }
			json.NewDecoder(res.Body).Decode(&body)
			if res.StatusCode != c.status || res.Header.Get("WWW-Authenticate") != c.challenge || body.Error == "" {
				t.Errorf("%s %s = %d, WWW-Authenticate %q, error %q; want %d, %q", c.method, mcpserver.Path, res.StatusCode,
					res.Header.Get("WWW-Authenticate"), body.Error, c.status, c.challenge)
			}
		})
	}
}
