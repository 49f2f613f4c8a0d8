package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/genvideo/gen/shared/workflow"
)

// remote is the bench's generator: it stands for a provider's API (as the
// fake provider of the Veo backends does), taking no local CPU: it waits
// latency, then writes each sample, a few bytes long. The starts measured
// are then the service's work, not ffmpeg's. It lives in this program
// only: nothing a customer sends can select it, and no stack uses it but
// the one `make bench` starts.
type remote struct{ latency time.Duration }

func (g remote) Generate(ctx context.Context, job workflow.Job) (workflow.Result, error) {
	select {
	case <-ctx.Done():
		return workflow.Result{}, ctx.Err()
	case <-time.After(g.latency):
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return workflow.Result{}, fmt.Errorf("out dir: %w", err)
	}
	var res workflow.Result
	for i := range max(job.Params.SampleCount, 1) {
		p := filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := os.WriteFile(p, []byte("bench sample "+job.TaskID), 0o600); err != nil {
			return workflow.Result{}, fmt.Errorf("write sample: %w", err)
		}
		res.Paths = append(res.Paths, p)
	}
	return res, nil
}
