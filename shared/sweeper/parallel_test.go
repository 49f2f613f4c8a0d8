package sweeper_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

type taskList struct {
	tasks []task.Task
	err   error
}

func (l taskList) Unfinished(context.Context) ([]task.Task, error) { return l.tasks, l.err }

type noFailer struct{}

func (noFailer) Fail(context.Context, workflow.FailInput) (workflow.TaskState, error) {
	return workflow.TaskState{}, errors.New("no task should be failed")
}

// gatedExecutions holds every lookup until the test opens the gate,
// counting the lookups in flight; no execution exists. failFor makes the
// lookups of one task fail.
type gatedExecutions struct {
	mu       sync.Mutex
	cond     *sync.Cond
	inFlight int
	most     int
	open     bool
	failFor  string
	started  []string
}

func newGated() *gatedExecutions {
	g := &gatedExecutions{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gatedExecutions) Execution(ctx context.Context, name string) (bool, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	g.cond.Broadcast()
	for !g.open {
		g.cond.Wait()
	}
	g.inFlight--
	if g.failFor != "" && strings.HasPrefix(name, g.failFor) {
		return false, false, errors.New("ThrottlingException: rate exceeded")
	}
	return false, false, nil
}

func (g *gatedExecutions) StartNamed(ctx context.Context, name string, t task.Task) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = append(g.started, name)
	return nil
}

// waitInFlight waits until n lookups are in flight at once, or fails the
// test when the sweep ends or a generous while passes first (a serial
// sweep never gets there).
func (g *gatedExecutions) waitInFlight(t *testing.T, n int, done <-chan struct{}) {
	t.Helper()
	reached := make(chan struct{})
	go func() {
		g.mu.Lock()
		for g.inFlight < n && !g.open {
			g.cond.Wait()
		}
		g.mu.Unlock()
		close(reached)
	}()
	select {
	case <-reached:
	case <-done:
		t.Errorf("the sweep ended before %d lookups were in flight at once", n)
	case <-time.After(30 * time.Second):
		g.mu.Lock()
		t.Errorf("%d lookups in flight at most, want %d at once", g.most, n)
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.open = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

func orphans(n int) []task.Task {
	var ts []task.Task
	for i := range n {
		// Processing: an execution ran, and is gone.
		ts = append(ts, task.Task{ID: "gen_1772366400000_orphan" + string(rune('a'+i)), Status: task.Processing,
			CreatedAt: now.Add(-2 * time.Minute), Deadline: now.Add(8 * time.Minute)})
	}
	return ts
}

// A sweep handles Parallelism tasks at once, never more, and looks up
// all of a task's execution names at once rather than one after another.
func TestSweepBoundedParallelism(t *testing.T) {
	const parallel, tasks = 3, 10
	g := newGated()
	sw := sweeper.New(sweeper.Config{Tasks: taskList{tasks: orphans(tasks)}, Failer: noFailer{}, Executions: g,
		Now: func() time.Time { return now }, Parallelism: parallel, Logger: quiet})
	done := make(chan struct{})
	var r sweeper.Report
	var err error
	go func() { defer close(done); r, err = sw.Sweep(context.Background()) }()
	names := 1 + sweeper.DefaultMaxRedrives
	g.waitInFlight(t, parallel*names, done)
	<-done
	if err != nil || r.Started != tasks {
		t.Fatalf("Sweep = %+v, %v; want %d started", r, err, tasks)
	}
	if g.most != parallel*names {
		t.Errorf("at most %d lookups in flight, want %d (%d tasks of %d names)", g.most, parallel*names, parallel, names)
	}
}

// One task that cannot be handled does not fail a scheduled sweep (which
// EventBridge would retry whole); a sweep that cannot list the tasks does.
func TestScheduledLeavesFailedTasksToTheNextSweep(t *testing.T) {
	ts := orphans(3)
	g := newGated()
	g.open = true
	g.failFor = ts[1].ID
	sw := sweeper.New(sweeper.Config{Tasks: taskList{tasks: ts}, Failer: noFailer{}, Executions: g,
		Now: func() time.Time { return now }, Logger: quiet})
	r, err := sw.Scheduled(context.Background())
	if err != nil || r.Errors != 1 || r.Started != 2 {
		t.Errorf("Scheduled with one failing task = %+v, %v; want 2 started, 1 error, no error returned", r, err)
	}
	if _, err := sw.Sweep(context.Background()); !errors.Is(err, sweeper.ErrTasks) {
		t.Errorf("Sweep with one failing task = %v, want ErrTasks", err)
	}
	down := sweeper.New(sweeper.Config{Tasks: taskList{err: errors.New("store down")}, Failer: noFailer{}, Executions: g, Logger: quiet})
	if _, err := down.Scheduled(context.Background()); err == nil {
		t.Errorf("Scheduled that cannot list the tasks: no error")
	}
}
