// Package workflowtest provides an in-memory double of the workflow's
// video generator. (Its blob storage double is shared/blob/memblob.)
package workflowtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/genvideo/gen/shared/provider"
)

var _ provider.Generator = (*Generator)(nil)

// Outcome decides one Generate call: how many videos to write, or the
// error to return instead. attempt counts the calls for the job's task,
// from 1. It may block on ctx (a slow generation).
type Outcome func(ctx context.Context, job provider.Job, attempt int) (videos int, err error)

// Generator is a provider.Generator that writes small fake MP4 files.
// By default every call writes one file per sample.
type Generator struct {
	// Outcome, when set, decides each call.
	Outcome Outcome

	mu     sync.Mutex
	calls  map[string]int
	inputs map[string]map[string][]byte
}

// Generate writes the videos Outcome asks for into job.OutDir, named
// sample-<n>.mp4 and holding VideoContent(job.TaskID, n).
func (g *Generator) Generate(ctx context.Context, job provider.Job) (provider.Result, error) {
	// The images live in a directory the step removes: keep their bytes.
	seen := map[string][]byte{}
	for role, path := range job.Images {
		data, err := os.ReadFile(path)
		if err != nil {
			return provider.Result{}, fmt.Errorf("read input %s: %w", role, err)
		}
		seen[role] = data
	}
	g.mu.Lock()
	if g.calls == nil {
		g.calls, g.inputs = map[string]int{}, map[string]map[string][]byte{}
	}
	g.calls[job.TaskID]++
	attempt := g.calls[job.TaskID]
	g.inputs[job.TaskID] = seen
	g.mu.Unlock()

	n := job.Params.SampleCount
	if g.Outcome != nil {
		var err error
		if n, err = g.Outcome(ctx, job, attempt); err != nil {
			return provider.Result{}, err
		}
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return provider.Result{}, err
	}
	var res provider.Result
	for i := range n {
		p := filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := os.WriteFile(p, VideoContent(job.TaskID, i), 0o644); err != nil {
			return provider.Result{}, err
		}
		res.Paths = append(res.Paths, p)
	}
	return res, nil
}

// Calls counts the Generate calls for a task.
func (g *Generator) Calls(taskID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[taskID]
}

// Inputs returns the bytes of the images the last call for the task was
// given, by role.
func (g *Generator) Inputs(taskID string) map[string][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inputs[taskID]
}

// VideoContent is what the fake writes as the n-th video of a task.
func VideoContent(taskID string, n int) []byte {
	return []byte(fmt.Sprintf("fake mp4 of %s, sample %d", taskID, n))
}
