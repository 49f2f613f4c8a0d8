package devstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/task"
)

// gatedGenerator stands for the provider: each job waits for its gate
// (or its context), then writes one small video file. It records the
// jobs whose context was cancelled.
type gatedGenerator struct {
	mu        sync.Mutex
	gates     map[string]chan struct{}
	entered   chan string
	cancelled map[string]bool
}

func newGatedGenerator() *gatedGenerator {
	return &gatedGenerator{gates: map[string]chan struct{}{}, entered: make(chan string, 1000), cancelled: map[string]bool{}}
}

func (g *gatedGenerator) gate(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[id] == nil {
		g.gates[id] = make(chan struct{})
	}
	return g.gates[id]
}

func (g *gatedGenerator) Generate(ctx context.Context, job provider.Job) (provider.Result, error) {
	g.entered <- job.TaskID
	select {
	case <-g.gate(job.TaskID):
	case <-ctx.Done():
		g.mu.Lock()
		g.cancelled[job.TaskID] = true
		g.mu.Unlock()
		return provider.Result{}, ctx.Err()
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Result{}, err
	}
	var paths []string
	for i := range job.Params.SampleCount {
		p := filepath.Join(job.OutDir, fmt.Sprintf("%d.mp4", i))
		if err := os.WriteFile(p, []byte("not really a video"), 0o600); err != nil {
			return provider.Result{}, err
		}
		paths = append(paths, p)
	}
	return provider.Result{Paths: paths}, nil
}

func (g *gatedGenerator) wasCancelled(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cancelled[id]
}

func gated(g *gatedGenerator) func(*Config) {
	return func(c *Config) { c.Hooks.WrapGenerator = func(provider.Generator) provider.Generator { return g } }
}

// A cancel lands while the generation runs: the task is failed with
// CANCELLED and refunded once, the running generation is stopped, no
// later step completes it, and a sweep leaves it alone.
func TestCancelStopsARunningGeneration(t *testing.T) {
	g := newGatedGenerator()
	e := startEnv(t, "", gated(g))
	k := e.key(1000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a long one","durationSeconds":8}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	if got := <-g.entered; got != id {
		t.Fatalf("generator entered for %s, want %s", got, id)
	}
	c := e.do(http.MethodPost, "/api/gen/cancel/"+id, k.APIKey, "", nil)
	if c.status != http.StatusOK || c.body["status"] != "failed" || str(c.body["error"].(map[string]any)["code"]) != task.FailCancelled {
		t.Fatalf("cancel = %d %s", c.status, c.raw)
	}
	e.stack.Wait() // the execution ends, aborted
	if !g.wasCancelled(id) {
		t.Error("the generation kept running after the cancel")
	}
	if _, err := e.stack.sweeper.Sweep(context.Background()); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	e.stack.Wait()
	tk, err := e.stack.Store.Task(context.Background(), id)
	if err != nil || !tk.Cancelled() || tk.CreditsRefunded != tk.CreditsCost {
		t.Errorf("after the cancel and a sweep the task is %+v, %v", tk, err)
	}
	if b := e.balance(k.AccountID); b != 1000 {
		t.Errorf("balance %d after the cancel, want 1000 (refunded once)", b)
	}
	if p, err := audit.Account(context.Background(), e.stack.Store, k.AccountID); err != nil || len(p) > 0 {
		t.Errorf("audit: %v %v", p, err)
	}
	again := e.do(http.MethodPost, "/api/gen/cancel/"+id, k.APIKey, "", nil)
	if again.status != http.StatusOK || string(again.raw) != string(c.raw) {
		t.Errorf("second cancel = %d %s, want the first answer", again.status, again.raw)
	}
}

// 100 cancels race 100 completions over HTTP: each task ends completed
// and charged or cancelled and refunded once; the books balance.
func TestCancelsRaceCompletions(t *testing.T) {
	g := newGatedGenerator()
	const n = 100
	e := startEnv(t, "", func(c *Config) {
		gated(g)(c)
		c.StepConcurrency = n // every generation running at once, the cancels racing them
	})
	k := e.key(1000000, store.KeyLimits{})
	ids := make([]string, n)
	for i := range ids {
		r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":"race %d","durationSeconds":4}`, i))
		if r.status != http.StatusAccepted {
			t.Fatalf("start %d = %d %s", i, r.status, r.raw)
		}
		ids[i] = str(r.body["taskId"])
	}
	for range n {
		<-g.entered // every generation is running
	}
	cancels := make([]response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, id := range ids {
		wg.Go(func() {
			<-start
			close(g.gate(id)) // the generation finishes...
		})
		wg.Go(func() {
			<-start
			cancels[i] = e.do(http.MethodPost, "/api/gen/cancel/"+id, k.APIKey, "", nil) // ...as the cancel lands
		})
	}
	close(start)
	wg.Wait()
	e.stack.Wait()

	completed, cancelled := 0, 0
	for i, id := range ids {
		tk, err := e.stack.Store.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch c := cancels[i]; {
		case tk.Status == task.Completed:
			completed++
			if c.status != http.StatusConflict || str(c.body["error"]) != "TASK_NOT_CANCELLABLE" {
				t.Errorf("task %d completed, but its cancel answered %d %s", i, c.status, c.raw)
			}
		case tk.Cancelled():
			cancelled++
			if c.status != http.StatusOK || tk.CreditsRefunded != tk.CreditsCost {
				t.Errorf("task %d cancelled: cancel answered %d %s, refunded %d of %d", i, c.status, c.raw, tk.CreditsRefunded, tk.CreditsCost)
			}
		default:
			t.Errorf("task %d ended %s %+v", i, tk.Status, tk.Failure)
		}
	}
	t.Logf("%d completed, %d cancelled", completed, cancelled)
	if p, err := audit.Account(context.Background(), e.stack.Store, k.AccountID); err != nil || len(p) > 0 {
		t.Errorf("audit: %v %v", p, err)
	}
	if a, _ := e.stack.Store.Account(context.Background(), k.AccountID); a.InFlight != 0 {
		t.Errorf("%d tasks still in flight", a.InFlight)
	}
}

// Delete removes a finished task's files at once: the download link
// handed out before answers 404, the files are gone from disk, status
// and history forget the task, and the ledger keeps its entries.
func TestDeleteRemovesFilesAndLinks(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(1000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"to delete","model":"gen-3.1-lite-generate-001","durationSeconds":4}`)
	id := str(r.body["taskId"])
	e.wait(k.APIKey, id)
	dl := e.do(http.MethodGet, "/api/gen/download/"+id, k.APIKey, "", nil)
	url := str(dl.body["videos"].([]any)[0].(map[string]any)["url"])
	e.fetch(url) // works before
	tk, err := e.store.Task(context.Background(), id)
	if err != nil || len(tk.Videos) == 0 {
		t.Fatalf("task %+v, %v", tk, err)
	}
	ledger, _ := e.store.Ledger(context.Background(), k.AccountID)

	d := e.do(http.MethodDelete, "/api/gen/tasks/"+id, k.APIKey, "", nil)
	if d.status != http.StatusNoContent {
		t.Fatalf("delete = %d %s", d.status, d.raw)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusForbidden {
		t.Errorf("the old download link answers %d after delete, want 404 or 403", resp.StatusCode)
	}
	// On the assembly the old link's 404 from S3 is the check.
	for _, v := range tk.Videos {
		if e.stack == nil {
			break
		}
		if _, err := e.stack.Blobs.Get(context.Background(), v.Key); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("blob %s after delete: %v, want gone", v.Key, err)
		}
	}
	if s := e.do(http.MethodGet, "/api/gen/status/"+id, k.APIKey, "", nil); s.status != http.StatusNotFound {
		t.Errorf("status after delete = %d", s.status)
	}
	if after, _ := e.store.Ledger(context.Background(), k.AccountID); len(after) != len(ledger) {
		t.Errorf("ledger has %d entries after delete, want %d", len(after), len(ledger))
	}
	cr := e.do(http.MethodGet, "/api/gen/credits", k.APIKey, "", nil)
	if cr.status != http.StatusOK || num(cr.body["balance"]) != e.balance(k.AccountID) || num(cr.body["held"]) != 0 {
		t.Errorf("credits = %d %s", cr.status, cr.raw)
	}
	if p, err := audit.Account(context.Background(), e.store, k.AccountID); err != nil || len(p) > 0 {
		t.Errorf("audit: %v %v", p, err)
	}
}
