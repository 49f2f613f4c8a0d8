package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

// scaleWorkload measures the service on a data directory of its own in
// which one account holds cfg.scale finished tasks: its start-up time and
// memory on that data, the sweeper's pass over it, and history page 1,
// page 500 by cursor, status polling and starts on that account, each
// beside the bare server and beside the same workload on the account of
// cfg.tasks tasks (b.measured).
func (b *bench) scaleWorkload(ctx context.Context, out io.Writer) error {
	n := b.cfg.scale
	dir, err := os.MkdirTemp("", "gen-bench-scale-")
	if err != nil {
		return err
	}
	if !b.cfg.keep {
		defer os.RemoveAll(dir)
	}
	st, err := devstack.OpenStore(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := admin.New(st).CreateKey(ctx, admin.KeyRequest{Name: "bench scale", Credits: 1 << 40, Tier: ratelimit.Enterprise, Limits: unlimited})
	if err != nil {
		return err
	}
	// Finished tasks, a millisecond apart up to now, newest last: a
	// history as a busy account leaves it. None is unfinished, so that the
	// service's start-up recovers nothing and no charge is missing from
	// the books of a task that could still move.
	base := time.Now().Add(-time.Duration(n) * time.Millisecond).UTC().Truncate(time.Millisecond)
	mk := func(i int) task.Task {
		created := base.Add(time.Duration(i) * time.Millisecond)
		// Deterministic, so that mk(i) names the same task again: the
		// suffix is i in base 36, as long as a NewID suffix.
		id := fmt.Sprintf("gen_%d_%010s", created.UnixMilli(), strconv.FormatInt(int64(i), 36))
		t := task.Task{ID: id, AccountID: k.AccountID, KeyName: "bench scale", Type: "text-to-video",
			Model: "gen-3.1-lite-generate-001", Prompt: fmt.Sprintf("scale task %d", i),
			Params:      params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p"},
			CreditsCost: 10, Status: task.Completed, CreatedAt: created, StartedAt: created.Add(time.Second),
			CompletedAt: created.Add(30 * time.Second), Deadline: created.Add(24 * time.Hour),
			Videos: []task.Video{{Key: "videos/" + id + "/0.mp4", MimeType: "video/mp4"}}}
		if i%10 == 9 {
			t.Status, t.Videos, t.CreditsRefunded = task.Failed, nil, 10
			t.Failure = &task.Failure{Code: task.FailInternal, Message: "the generation failed"}
		}
		return t
	}
	t0 := time.Now()
	if err := st.ImportTasks(ctx, n, mk); err != nil {
		return err
	}
	seeded := time.Since(t0)
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(devstack.StorePath(dir) + suffix); err == nil {
			size += fi.Size()
		}
	}

	// The sweeper's pass, as the service's start-up and every
	// GEN_SWEEP_INTERVAL make it: what grows with the data is its read
	// of the unfinished tasks.
	sw := sweeper.New(sweeper.Config{Tasks: st, Failer: untouched{}, Executions: untouched{}})
	t0 = time.Now()
	rep, err := sw.Sweep(ctx)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	swept := time.Since(t0)

	cfg := b.cfg
	cfg.profile = "" // the first service's only
	c, err := startChild(ctx, cfg, dir)
	if err != nil {
		return err
	}
	defer c.stop()
	startRSS := c.peakRSS()
	sb := &bench{cfg: cfg, svcURL: c.url}
	newest := mk(n - 1)
	if newest.Status != task.Completed {
		newest = mk(n - 2)
	}
	cursor, err := sb.cursorTo(ctx, 500, k.APIKey)
	if err != nil {
		return err
	}
	bodies := map[string][]byte{}
	for pattern, path := range map[string]string{
		"GET /api/gen/status/{id}": "/api/gen/status/" + newest.ID,
		"GET /api/gen/history":     fmt.Sprintf("/api/gen/history?limit=%d", pageSize),
	} {
		if bodies[pattern], err = sb.raw(ctx, http.MethodGet, path, k.APIKey, nil); err != nil {
			return err
		}
	}
	if bodies[startPattern], err = sb.raw(ctx, http.MethodPost, "/api/gen/text-to-video", k.APIKey, startBody); err != nil {
		return err
	}
	bareSrv, bareURL, err := serveBare(bodies)
	if err != nil {
		return err
	}
	defer bareSrv.Close()

	fmt.Fprintf(out, "\nScale: one account of %d tasks (%s on disk, seeded through sqlitestore.ImportTasks in %v)\n",
		n, mb(size), seeded.Round(time.Millisecond))
	fmt.Fprintf(out, "  make run's start-up on that data: %v to its first answer, peak RSS %s\n", c.startUp.Round(time.Millisecond), mb(startRSS))
	fmt.Fprintf(out, "  the sweeper's pass over it: %v (%d unfinished)\n", swept.Round(time.Microsecond), rep.Unfinished)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\treq/s\tbare req/s\tratio\tp50\tp99\tp99 ratio\tnon-2xx\terrors\tpeak RSS\treq/s of %d tasks\tthis/that\t\n", b.cfg.tasks)
	for _, w := range []workload{
		{"history page 1", http.MethodGet, fmt.Sprintf("/api/gen/history?limit=%d", pageSize), k.APIKey, nil},
		{"history page 500 (cursor)", http.MethodGet, fmt.Sprintf("/api/gen/history?limit=%d&cursor=%s", pageSize, url.QueryEscape(cursor)), k.APIKey, nil},
		{"status polling", http.MethodGet, "/api/gen/status/" + newest.ID, k.APIKey, nil},
		{"starts", http.MethodPost, "/api/gen/text-to-video", k.APIKey, startBody},
	} {
		c.resetPeak()
		svc, bareF := compare(ctx, cfg.conns, cfg.rounds, cfg.warm, cfg.duration,
			func(int, int) *http.Request { return sb.request(c.url, w.method, w.path, w.key, w.body) },
			func(int, int) *http.Request { return sb.request(bareURL, w.method, w.path, w.key, w.body) })
		svc.peakRSS = c.peakRSS()
		small, vs := "-", "-"
		if m, ok := b.measured[w.name]; ok && m.n > 0 {
			small, vs = fmt.Sprintf("%.0f", m.rps()), fmt.Sprintf("%.2f", svc.rps()/m.rps())
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%s\t%s\t%.2f\t%d\t%d\t%s\t%s\t%s\t\n", w.name, svc.rps(), bareF.rps(), svc.rps()/bareF.rps(),
			ms(svc.p50), ms(svc.p99), float64(svc.p99)/float64(bareF.p99), svc.non2xx, svc.errs, mb(svc.peakRSS), small, vs)
		if w.method == http.MethodPost {
			if err := b.wait(ctx, st, k.AccountID); err != nil {
				return err
			}
		}
	}
	tw.Flush()
	return nil
}

// untouched stands for the workflow and its executions in the bench's
// sweep: with no task unfinished, the sweep calls neither.
type untouched struct{}

var errTouched = errors.New("the bench's sweep has no workflow")

func (untouched) Fail(context.Context, workflow.FailInput) (workflow.TaskState, error) {
	return workflow.TaskState{}, errTouched
}
func (untouched) Execution(context.Context, string) (bool, bool, error) {
	return false, false, errTouched
}
func (untouched) StartNamed(context.Context, string, task.Task) error { return errTouched }
