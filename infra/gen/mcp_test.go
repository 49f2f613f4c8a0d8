package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// `gen mcp` serves the tools over its stdin and stdout, with the key and
// base URL of every other command, and ends when the host closes stdin.
// (shared/devstack's TestMCPWithTheTypeScriptSDK starts it as a host
// does, a child process, and drives it with the official TypeScript SDK.)
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	env := environment{
		stdin: inR, stdout: outW, stderr: &stderr,
		newClient: func(base, key string, opts ...client.Option) (*client.Client, error) {
			hc := &http.Client{Transport: &openapitest.Transport{TB: t, CheckRequests: true}}
			return client.New(base, key, append(opts, client.WithHTTPClient(hc))...)
		},
	}
	env.getenv = func(name string) string {
		return map[string]string{"GEN_API_KEY": k.APIKey, "GEN_BASE_URL": stack.URL}[name]
	}
	exit := make(chan int, 1)
	go func() {
		exit <- run(context.Background(), []string{"mcp"}, env)
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolTextToVideo,
		Arguments: map[string]any{"prompt": "a lantern on a jetty", "model": client.ModelLite, "durationSeconds": 4, "generateAudio": false}})
	if err != nil || res.IsError {
		t.Fatalf("start: %+v, %v", res, err)
	}
	var started mcpserver.StartOutput
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &started)
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolWaitForTask,
		Arguments: map[string]any{"taskId": started.Started.TaskID, "timeoutSeconds": 120}})
	if err != nil || res.IsError {
		t.Fatalf("wait: %+v, %v", res, err)
	}
	var done mcpserver.TaskOutput
	b, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &done)
	if done.Finished == nil || !*done.Finished || done.Task.Status != client.StatusCompleted || len(done.Task.Videos) != 1 || done.Task.CreditsCost != started.Started.CreditsUsed {
		t.Errorf("the task ended %s", b)
	}
	cs.Close()
	if code := <-exit; code != exitOK {
		t.Errorf("gen mcp exited %d once stdin closed: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), k.APIKey) {
		t.Errorf("the log carries the key")
	}

	// Without a key it says so at once, rather than refusing every call.
	if r := genWith(t, map[string]string{"GEN_BASE_URL": stack.URL}, true, "mcp"); r.code != exitError || !strings.Contains(r.stderr, "GEN_API_KEY") {
		t.Errorf("gen mcp without a key: %v", r)
	}
}
