package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
)

// The bench's provider is a long-running operation named with its due
// time: not done before it, done from it with a video and a poster per
// sample, billed to the bench's route at no cost.
func TestRemoteProvider(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := t0
	g := remote{latency: 5 * time.Second, now: func() time.Time { return now }}
	job := provider.Job{TaskID: "t1", Model: "gen-3.1-lite-generate-001",
		Params: params.Parameters{SampleCount: 2}, OutDir: t.TempDir() + "/out"}
	op, err := g.Submit(t.Context(), job)
	if err != nil || op.Done || op.PollAfter != 5*time.Second || !strings.HasPrefix(op.Name, benchOperation) {
		t.Fatalf("Submit = %+v, %v; want a bench operation to poll after 5s", op, err)
	}

	tests := []struct {
		at       time.Duration
		wantDone bool
		wantLeft time.Duration
	}{
		{0, false, 5 * time.Second},
		{2 * time.Second, false, 3 * time.Second},
		{5 * time.Second, true, 0},
		{time.Hour, true, 0},
	}
	for _, tt := range tests {
		now = t0.Add(tt.at)
		got, err := g.Poll(t.Context(), op.Name, job)
		if err != nil || got.Done != tt.wantDone || got.PollAfter != tt.wantLeft || got.Name != op.Name {
			t.Errorf("Poll at +%v = %+v, %v; want done %v, poll after %v", tt.at, got, err, tt.wantDone, tt.wantLeft)
			continue
		}
		if !got.Done {
			continue
		}
		if len(got.Result.Paths) != 2 || len(got.Result.Posters) != 2 {
			t.Errorf("Poll at +%v: %d videos and %d posters, want 2 and 2", tt.at, len(got.Result.Paths), len(got.Result.Posters))
		}
		for _, p := range got.Result.Posters {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := jpeg.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("poster %s is not a JPEG: %v", p, err)
			}
		}
		if want := (provider.Billing{Route: "bench", ProviderModel: job.Model}); got.Billing != want {
			t.Errorf("billing %+v, want %+v", got.Billing, want)
		}
	}

	for _, name := range []string{"", "bench:", "bench:soon", "ops/1"} {
		if _, err := g.Poll(t.Context(), name, job); err == nil {
			t.Errorf("Poll(%q) answered no error, want one: not a bench operation", name)
		}
	}
}

// The bench's start, as the starts workload posts it, is accepted by a
// stack whose provider is the bench's (the built-in route's capabilities
// check it), and the task completes through a submit and a poll, with
// the provider's poster stored as the video's.
func TestRemoteProviderInTheStack(t *testing.T) {
	e := devstacktest.Start(t, func(c *devstack.Config) {
		c.Hooks.WrapProvider = func(provider.Provider) provider.Provider { return remote{latency: time.Second} }
	})
	k := e.Key(t, 1000, store.KeyLimits{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.URL+"/api/gen/text-to-video", bytes.NewReader(startBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", k.APIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var started struct{ TaskID string }
	if res.StatusCode != http.StatusAccepted || json.Unmarshal(body, &started) != nil || started.TaskID == "" {
		t.Fatalf("the bench's start = %d %s, want 202 with a task", res.StatusCode, body)
	}

	c, err := client.New(e.URL, k.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := c.Wait(t.Context(), started.TaskID, client.WaitOptions{Timeout: time.Minute})
	if err != nil || len(tk.Videos) != 1 || tk.Route != "bench" {
		t.Fatalf("Wait = %+v, %v; want completed with one video on the bench's route", tk, err)
	}
	if op := stored(t, e, started.TaskID); !strings.HasPrefix(op, benchOperation) {
		t.Errorf("the task's operation is %q, want a bench operation (submitted, then polled)", op)
	}
	poster := devstacktest.Fetch(t, tk.Videos[0].PosterURL)
	if !bytes.Equal(poster, benchPoster) {
		t.Errorf("the stored poster is %d bytes, want the provider's %d", len(poster), len(benchPoster))
	}
}

// stored is the operation the store keeps on a task.
func stored(t *testing.T, e *devstacktest.Env, id string) string {
	t.Helper()
	tk, err := e.Stack.Store.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tk.Operation
}
