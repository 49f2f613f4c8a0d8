package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
)

// unlimited are an Enterprise key's limits far above any load here.
var unlimited = store.KeyLimits{RequestsPerMinute: 1 << 30, RequestsPerDay: 1 << 30, StartsPerMinute: 1 << 30, MaxInFlight: 1 << 20}

// pageSize is the history page of the history workloads.
const pageSize = 20

// bench is the service, in a child process (child.go), and the bare
// server, in this one.
type bench struct {
	cfg     config
	dir     string
	st      *sqlitestore.Store // this process's handle on the service's data
	svc     *child
	bareSrv *http.Server
	svcURL  string
	bareURL string

	key, account         string // the polling and starting Enterprise key
	histKey, histAccount string // the account of cfg.tasks tasks
	done                 string // a completed task, polled
	pending              string // a task of the history account that stays pending, polled
	cursor500            string // the history's nextCursor that leads to page 500
	// accepted counts the starts the service answered 202 on b.key;
	// unanswered those that got no answer at all (a timeout, a reset
	// connection), each of which may or may not have created a task.
	accepted, unanswered int
	// measured are the HTTP workloads' figures, by name, for the scale
	// workload's comparison.
	measured map[string]figures
}

func setUp(ctx context.Context, cfg config) (*bench, error) {
	b := &bench{cfg: cfg, measured: map[string]figures{}}
	var err error
	if b.dir, err = os.MkdirTemp("", "gen-bench-"); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			b.close()
		}
	}()
	// The keys are made before the service starts, through the store, as
	// genctl makes them; the history account is seeded once it runs, so
	// that its pending tasks are not generations to recover.
	if b.st, err = devstack.OpenStore(b.dir); err != nil {
		return nil, err
	}
	a := admin.New(b.st)
	k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "bench", Credits: 1 << 40, Tier: ratelimit.Enterprise, Limits: unlimited})
	if err != nil {
		return nil, err
	}
	b.key, b.account = k.APIKey, k.AccountID
	b.accepted = 2 // completedTask's, and the one whose answer the bare server repeats
	if k, err = a.CreateKey(ctx, admin.KeyRequest{Name: "bench history", Credits: int64(cfg.tasks) * 100, Tier: ratelimit.Enterprise, Limits: unlimited}); err != nil {
		return nil, err
	}
	b.histKey, b.histAccount = k.APIKey, k.AccountID
	if b.svc, err = startChild(ctx, cfg, b.dir); err != nil {
		return nil, err
	}
	b.svcURL = b.svc.url
	fmt.Fprintf(os.Stderr, "the service started in %v, peak RSS %s\n", b.svc.startUp.Round(time.Millisecond), mb(b.svc.peakRSS()))

	if b.done, err = b.completedTask(ctx); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := seed(ctx, b.st, b.histAccount, cfg.tasks, 1); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "seeded %d tasks on SQLite in %v\n", cfg.tasks, time.Since(t0).Round(time.Millisecond))
	newest, _, err := b.st.Tasks(ctx, b.histAccount, store.TaskQuery{Limit: 1})
	if err != nil || len(newest) == 0 {
		return nil, fmt.Errorf("the newest history task: %v", err)
	}
	b.pending = newest[0].ID
	if cfg.tasks >= 500*pageSize {
		if b.cursor500, err = b.cursorTo(ctx, 500, b.histKey); err != nil {
			return nil, err
		}
	}

	// The bare server answers with what the service answered.
	bodies := map[string][]byte{}
	for pattern, path := range map[string]string{
		"GET /api/gen/status/{id}": "/api/gen/status/" + b.done,
		"GET /api/gen/history":     fmt.Sprintf("/api/gen/history?limit=%d", pageSize),
		"GET /api/gen/models":      "/api/gen/models",
	} {
		key := b.key
		if strings.Contains(path, "history") {
			key = b.histKey
		}
		body, err := b.raw(ctx, http.MethodGet, path, key, nil)
		if err != nil {
			return nil, err
		}
		bodies[pattern] = body
	}
	if bodies[startPattern], err = b.raw(ctx, http.MethodPost, "/api/gen/text-to-video", b.key, startBody); err != nil {
		return nil, err
	}
	if b.bareSrv, b.bareURL, err = serveBare(bodies); err != nil {
		return nil, err
	}
	if err := b.wait(ctx, b.st, b.account); err != nil {
		return nil, err
	}
	ok = true
	return b, nil
}

// cursorTo returns the nextCursor that leads to page n of key's history,
// or "" when it has fewer pages.
func (b *bench) cursorTo(ctx context.Context, n int, key string) (string, error) {
	var page struct {
		Pagination struct{ NextCursor string } `json:"pagination"`
	}
	if err := b.getJSON(ctx, fmt.Sprintf("/api/gen/history?limit=%d&skip=%d", pageSize, (n-2)*pageSize), key, &page); err != nil {
		return "", err
	}
	return page.Pagination.NextCursor, nil
}

// serveBare starts the bare server on a loopback port.
func serveBare(bodies map[string][]byte) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return bare(ln, bodies), "http://" + ln.Addr().String(), nil
}

// wait returns once account has no task pending or processing: every
// generation its starts queued has ended.
func (b *bench) wait(ctx context.Context, st store.Store, account string) error {
	// This process's store answers counts from its page cache for up to
	// sqlitestore.PageCacheTTL after another process (the service) wrote:
	// none unfinished counts only once seen that long after the first.
	var none time.Time
	for {
		unfinished := 0
		for _, s := range []task.Status{task.Pending, task.Processing} {
			_, n, err := st.Tasks(ctx, account, store.TaskQuery{Status: s, Limit: 1})
			if err != nil {
				return err
			}
			unfinished += n
		}
		switch {
		case unfinished > 0:
			none = time.Time{}
		case none.IsZero():
			none = time.Now()
		case time.Since(none) > sqlitestore.PageCacheTTL:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

var startBody = []byte(`{"prompt":"a bench of the starts","model":"gen-3.1-lite-generate-001","durationSeconds":4}`)

// seed creates n pending tasks of account, newest last, a millisecond
// apart, with workers writers at once.
func seed(ctx context.Context, st store.Store, account string, n, workers int) error {
	base := time.Now().Add(-time.Duration(n) * time.Millisecond).UTC().Truncate(time.Millisecond)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < n; i += workers {
				created := base.Add(time.Duration(i) * time.Millisecond)
				t := task.Task{ID: task.NewID(created), AccountID: account, KeyName: "bench history", Type: "text-to-video",
					Model: "gen-3.1-lite-generate-001", Prompt: fmt.Sprintf("history task %d", i),
					CreditsCost: 1, Status: task.Pending, CreatedAt: created, Deadline: created.Add(24 * time.Hour)}
				if _, err := st.CreateTask(ctx, t, domain.StartGuard{}); err != nil {
					errs <- fmt.Errorf("seed task %d: %w", i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range workers {
		err = errors.Join(err, <-errs)
	}
	return err
}

// completedTask starts a generation and waits for it to complete.
func (b *bench) completedTask(ctx context.Context) (string, error) {
	var started struct{ TaskID string }
	body, err := b.raw(ctx, http.MethodPost, "/api/gen/text-to-video", b.key, startBody)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(body, &started); err != nil || started.TaskID == "" {
		return "", fmt.Errorf("start: %s", body)
	}
	for {
		var st struct{ Status string }
		if err := b.getJSON(ctx, "/api/gen/status/"+started.TaskID, b.key, &st); err != nil {
			return "", err
		}
		switch st.Status {
		case "completed":
			return started.TaskID, nil
		case "failed":
			return "", fmt.Errorf("the polled task %s failed", started.TaskID)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *bench) raw(ctx context.Context, method, path, key string, body []byte) ([]byte, error) {
	req := b.request(b.svcURL, method, path, key, body)
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return out, nil
}

func (b *bench) getJSON(ctx context.Context, path, key string, v any) error {
	body, err := b.raw(ctx, http.MethodGet, path, key, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

func (b *bench) request(base, method, path, key string, body []byte) *http.Request {
	var r io.Reader
	if body != nil {
		r = strings.NewReader(string(body))
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		panic(err) // the paths are the bench's own
	}
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// workload is one row of the table.
type workload struct {
	name   string
	method string
	path   string
	key    string
	body   []byte
}

func (b *bench) http(ctx context.Context, out io.Writer) error {
	reads := []workload{
		{"status polling", http.MethodGet, "/api/gen/status/" + b.done, b.key, nil},
		{"status polling (pending)", http.MethodGet, "/api/gen/status/" + b.pending, b.histKey, nil},
		{"models", http.MethodGet, "/api/gen/models", b.key, nil},
		{"history page 1", http.MethodGet, fmt.Sprintf("/api/gen/history?limit=%d", pageSize), b.histKey, nil},
	}
	if b.cursor500 != "" {
		reads = append(reads,
			workload{"history page 500 (cursor)", http.MethodGet, fmt.Sprintf("/api/gen/history?limit=%d&cursor=%s", pageSize, url.QueryEscape(b.cursor500)), b.histKey, nil},
			workload{"history page 500 (skip)", http.MethodGet, fmt.Sprintf("/api/gen/history?limit=%d&skip=%d", pageSize, 499*pageSize), b.histKey, nil})
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(out, "HTTP, %d connections (service figure, bare net/http figure, service/bare)\n", b.cfg.conns)
	fmt.Fprintln(tw, "workload\treq/s\tbare req/s\tratio\tp50\tp99\tbare p99\tp99 ratio\tnon-2xx\terrors\tpeak RSS\t")
	row := func(w workload, svc, bareF figures) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%s\t%s\t%s\t%.2f\t%d\t%d\t%s\t\n", w.name, svc.rps(), bareF.rps(), svc.rps()/bareF.rps(),
			ms(svc.p50), ms(svc.p99), ms(bareF.p99), float64(svc.p99)/float64(bareF.p99), svc.non2xx, svc.errs, mb(svc.peakRSS))
	}
	var drains []string
	for _, w := range append(reads, workload{"starts", http.MethodPost, "/api/gen/text-to-video", b.key, startBody}) {
		if !strings.Contains(w.name, b.cfg.only) {
			continue
		}
		b.svc.resetPeak()
		svc, bareF := compare(ctx, b.cfg.conns, b.cfg.rounds, b.cfg.warm, b.cfg.duration,
			func(int, int) *http.Request { return b.request(b.svcURL, w.method, w.path, w.key, w.body) },
			func(int, int) *http.Request { return b.request(b.bareURL, w.method, w.path, w.key, w.body) })
		svc.peakRSS = b.svc.peakRSS()
		if w.method == http.MethodPost {
			b.svc.profileMemory(b.cfg)
		}
		row(w, svc, bareF)
		b.measured[w.name] = svc
		if w.method == http.MethodPost {
			b.accepted += svc.all2xx
			b.unanswered += svc.unanswered
			// The generations queued by the load finish before anything
			// else is measured.
			t0 := time.Now()
			if err := b.wait(ctx, b.st, b.account); err != nil {
				return err
			}
			drains = append(drains, fmt.Sprintf("%s: the last of the load's %d generations finished %s after it ended",
				w.name, svc.all2xx, time.Since(t0).Round(100*time.Millisecond)))
		}
	}
	tw.Flush()
	for _, d := range drains {
		fmt.Fprintln(out, d)
	}

	fmt.Fprintf(out, "\nOne client, one request after another (p50, p99)\n")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tn\tp50\tp99\tbare p50\tnon-2xx\t")
	single := append(reads, workload{"start", http.MethodPost, "/api/gen/text-to-video", b.key, startBody})
	p50 := map[string]time.Duration{}
	for _, w := range single {
		if !strings.Contains(w.name, b.cfg.only) {
			continue
		}
		n := 300
		bareF := sequential(ctx, n, func(int, int) *http.Request { return b.request(b.bareURL, w.method, w.path, w.key, w.body) })
		svc := sequential(ctx, n, func(int, int) *http.Request { return b.request(b.svcURL, w.method, w.path, w.key, w.body) })
		p50[w.name] = svc.p50
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t\n", w.name, svc.n, ms(svc.p50), ms(svc.p99), ms(bareF.p50), svc.non2xx)
		if w.method == http.MethodPost {
			b.accepted += svc.all2xx
			b.unanswered += svc.unanswered
			if err := b.wait(ctx, b.st, b.account); err != nil {
				return err
			}
		}
	}
	tw.Flush()
	if b.cursor500 != "" {
		fmt.Fprintf(out, "\nHistory on SQLite, page 500 / page 1 (p50, one client): cursor %.2f, skip %.2f\n",
			float64(p50["history page 500 (cursor)"])/float64(p50["history page 1"]),
			float64(p50["history page 500 (skip)"])/float64(p50["history page 1"]))
	}
	return b.ledger(ctx, out)
}

// ledger checks, once every generation started has finished, that the
// starting account's books balance and that no task is left unfinished.
func (b *bench) ledger(ctx context.Context, out io.Writer) error {
	if err := b.wait(ctx, b.st, b.account); err != nil {
		return err
	}
	problems, err := audit.Account(ctx, b.st, b.account)
	if err != nil {
		return err
	}
	_, total, err := b.st.Tasks(ctx, b.account, store.TaskQuery{Limit: 1})
	if err != nil {
		return err
	}
	unfinished := 0
	for _, st := range []task.Status{task.Pending, task.Processing} {
		_, n, err := b.st.Tasks(ctx, b.account, store.TaskQuery{Status: st, Limit: 1})
		if err != nil {
			return err
		}
		unfinished += n
	}
	_, failed, err := b.st.Tasks(ctx, b.account, store.TaskQuery{Status: task.Failed, Limit: 1})
	if err != nil {
		return err
	}
	verdict := "PASS"
	// A start that got no answer may have made its task: only those
	// may stand between the 202s and the tasks.
	// The bench's provider fails nothing: a failed task (past its
	// deadline in a queue, say) is a generation the load lost.
	if len(problems) > 0 || unfinished > 0 || failed > 0 || total < b.accepted || total > b.accepted+b.unanswered {
		verdict = "FAIL"
	}
	fmt.Fprintf(out, "\nLedger check after the starts: %s (%d starts answered 202, %d unanswered, %d tasks stored, %d unfinished, %d failed, %d problems in the books)\n",
		verdict, b.accepted, b.unanswered, total, unfinished, failed, len(problems))
	for _, p := range problems {
		fmt.Fprintln(out, "  ", p)
	}
	return nil
}

func (b *bench) close() {
	b.svc.stop()
	if b.bareSrv != nil {
		b.bareSrv.Close()
	}
	if b.st != nil {
		b.st.Close()
	}
	if b.dir != "" && !b.cfg.keep {
		os.RemoveAll(b.dir)
	}
}
