package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The method of issue 38, "measured from outside": wrk against make run's
// own service, next to a bare net/http server measured before and after
// it in the same run. Nothing of the service is reached into: it is the
// gen-local binary with its defaults and a fresh data directory, its keys
// are made by the genctl binary, and its history account is filled by
// real starts over HTTP.

// The goals of issue 38, as ratios to the bare server.
const (
	goalStatusRPS = 0.7 // status req/s at least this share of the bare's
	goalStatusP99 = 2.0 // status p99 at most this many times the bare's
	goalHistory   = 0.5 // history page 1 req/s at least this share
	goalDepth     = 1.2 // history at depth costs at most this many page 1s
)

// outsideConfig is the method's: wrk's flags and the account's shape.
type outsideConfig struct {
	conns    int
	duration time.Duration
	// tasks is the history account's size the bursts fill it to; depth
	// the task the deep page starts at.
	tasks, depth int
	// burstConns and burst are one burst of starts: 16 connections for 2 s.
	burstConns int
	burst      time.Duration
	// settle is the longest the bench waits, after the fill, for the
	// generations the bursts queued to end (rendered, or failed past
	// their deadline) before it measures the history.
	settle time.Duration
	// trace, when set, is where the service writes its runtime trace
	// (gen-local's GEN_TRACE) of the whole run.
	trace string
	keep  bool
}

// statusSized is the bare server's body: a status answer's shape and
// size (about 700 bytes), a completed task with its signed video link.
var statusSized = []byte(`{"success":true,"taskId":"tsk_01JDBENCH0000000000000000","status":"completed","progress":100,` +
	`"model":"gen-3.1-lite-generate-001","prompt":"a bench of the starts","createdAt":"2026-11-28T06:00:00.000Z",` +
	`"updatedAt":"2026-11-28T06:00:04.000Z","completedAt":"2026-11-28T06:00:04.000Z","creditsCost":4,` +
	`"videos":[{"url":"http://127.0.0.1:8080/blobs/videos/tsk_01JDBENCH0000000000000000/0.mp4?expires=1795932000&sig=` +
	`3b1f0c9e2d7a4b5c6d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e","mimeType":"video/mp4","durationSeconds":4,` +
	`"resolution":"720p","expiresAt":"2026-11-29T06:00:04.000Z"}],` +
	`"totalVideos":1,"parameters":{"durationSeconds":4,"aspectRatio":"16:9","resolution":"720p","sampleCount":1,` +
	`"generateAudio":false},"error":null}`)

// bareStatus is the yardstick of the method: Go's net/http answering the
// status-sized body with the three X-RateLimit-* headers gen sends.
func bareStatus(ln net.Listener) *http.Server {
	h := func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Type", "application/json")
		hd.Set("X-RateLimit-Limit", "100000000")
		hd.Set("X-RateLimit-Remaining", "99999999")
		hd.Set("X-RateLimit-Reset", "1795932060")
		w.Write(statusSized)
	}
	srv := &http.Server{Handler: http.HandlerFunc(h), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv
}

// outsideRow is one wrk measure.
type outsideRow struct {
	name string
	f    wrkFigures
}

// outside runs the method and prints its table and the ratios.
func outside(ctx context.Context, oc outsideConfig, out io.Writer) error {
	dir, err := os.MkdirTemp("", "gen-bench-outside-")
	if err != nil {
		return err
	}
	if !oc.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintf(out, "data kept in %s\n", dir)
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return fmt.Errorf("the bench measures with wrk (Debian package wrk; make bench installs it): %w", err)
	}
	// The binaries make run and make genctl run (go run builds the same).
	bin := filepath.Join(dir, "bin")
	for _, p := range []string{"gen-local", "genctl"} {
		if b, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, p), "./infra/"+p).CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./infra/%s (run from the checkout's root): %w: %s", p, err, b)
		}
	}

	bareLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	bareSrv := bareStatus(bareLn)
	defer bareSrv.Close()
	bareURL := "http://" + bareLn.Addr().String() + "/api/gen/status/tsk_01JDBENCH0000000000000000"

	loadavg, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "From outside (issue 38): wrk -t2 -c%d -d%v --latency; gen-local with its defaults; bare net/http before and after\n", oc.conns, oc.duration)
	fmt.Fprintf(out, "%d CPUs, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), strings.TrimSpace(string(loadavg)))
	var rows []outsideRow
	measure := func(name, u string, key string) error {
		h := map[string]string{}
		if key != "" {
			h["X-API-Key"] = key
		}
		f, raw, err := runWrk(ctx, oc.conns, oc.duration, u, h)
		if err != nil {
			return err
		}
		if !f.ok() {
			return fmt.Errorf("%s: wrk saw failures (%d non-2xx, %d socket errors):\n%s", name, f.non2xx, f.socketErrs, raw)
		}
		rows = append(rows, outsideRow{name, f})
		fmt.Fprintf(os.Stderr, "  %s: %.0f req/s, p99 %s\n", name, f.rps, ms(f.p99))
		return nil
	}
	if err := measure("bare (before)", bareURL, ""); err != nil {
		return err
	}

	g, err := startGen(ctx, bin, filepath.Join(dir, "data"), oc.trace)
	if err != nil {
		return err
	}
	defer g.stop()
	genctl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "genctl"), args...)
		cmd.Env = g.env
		b, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("genctl %s: %w", strings.Join(args, " "), err)
		}
		var k struct{ APIKey string }
		if err := json.Unmarshal(b, &k); err != nil || k.APIKey == "" {
			return "", fmt.Errorf("genctl %s: %q", strings.Join(args, " "), b)
		}
		return k.APIKey, nil
	}
	// The key, with credits to start the polled task.
	key, err := genctl("keys", "create", "--name", "bench", "--tier", "enterprise", "--rpm", "100000000", "--rpd", "1000000000",
		"--credits", "1000", "--json")
	if err != nil {
		return err
	}
	// The history account's: its bursts of starts need the generation
	// budget raised too (Pro's 50 starts a minute, 25 in flight, would
	// take hours to 7,000), and the credits for them.
	histKey, err := genctl("keys", "create", "--name", "bench history", "--tier", "enterprise", "--rpm", "100000000", "--rpd", "1000000000",
		"--starts-per-minute", "100000000", "--max-in-flight", "100000000", "--credits", "100000000", "--json")
	if err != nil {
		return err
	}

	sb := &bench{svcURL: g.url}
	sb.key = key
	done, err := sb.completedTask(ctx)
	if err != nil {
		return err
	}
	if body, err := sb.raw(ctx, http.MethodGet, "/api/gen/status/"+done, key, nil); err == nil {
		fmt.Fprintf(out, "gen's status answer: %d bytes of body; the bare server's: %d\n", len(body), len(statusSized))
	}
	if err := measure("status of a finished task", g.url+"/api/gen/status/"+done, key); err != nil {
		return err
	}

	// The history account: bursts of real starts until it holds oc.tasks.
	t0 := time.Now()
	bursts, total := 0, 0
	for total < oc.tasks {
		f := load(ctx, oc.burstConns, 0, oc.burst, func(int, int) *http.Request {
			return sb.request(g.url, http.MethodPost, "/api/gen/text-to-video", histKey, startBody)
		})
		bursts++
		if f.all2xx == 0 {
			return fmt.Errorf("burst %d of starts: none accepted (%d non-2xx, %d errors)", bursts, f.non2xx, f.errs)
		}
		if total, err = historyTotal(ctx, sb, histKey, ""); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	fmt.Fprintf(out, "history account: %d tasks from %d bursts of starts (%d connections, %v each) in %v\n",
		total, bursts, oc.burstConns, oc.burst, time.Since(t0).Round(100*time.Millisecond))
	t0 = time.Now()
	unfinished := 0
	for {
		unfinished = 0
		for _, s := range []string{"pending", "processing"} {
			n, err := historyTotal(ctx, sb, histKey, s)
			if err != nil {
				return err
			}
			unfinished += n
		}
		if unfinished == 0 || time.Since(t0) > oc.settle {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	fmt.Fprintf(out, "its generations: %d still unfinished %v after the fill (the renderer's backlog; -settle)\n",
		unfinished, time.Since(t0).Round(time.Second))

	var deep struct {
		Pagination struct{ NextCursor string } `json:"pagination"`
	}
	if err := sb.getJSON(ctx, fmt.Sprintf("/api/gen/history?limit=%d&skip=%d", pageSize, oc.depth-pageSize), histKey, &deep); err != nil {
		return err
	}
	if deep.Pagination.NextCursor == "" {
		return fmt.Errorf("no cursor to depth %d of %d tasks", oc.depth, total)
	}
	if err := measure("history page 1", fmt.Sprintf("%s/api/gen/history?limit=%d", g.url, pageSize), histKey); err != nil {
		return err
	}
	if err := measure(fmt.Sprintf("history at %d (cursor)", oc.depth),
		fmt.Sprintf("%s/api/gen/history?limit=%d&cursor=%s", g.url, pageSize, url.QueryEscape(deep.Pagination.NextCursor)), histKey); err != nil {
		return err
	}
	// The bare server after, with the service stopped, as before it
	// started: the two bracket the service's measures.
	if err := g.stop(); err != nil {
		return err
	}
	if err := measure("bare (after)", bareURL, ""); err != nil {
		return err
	}
	printOutside(out, rows)
	return nil
}

// historyTotal is pagination.total of key's history, of one status or all.
func historyTotal(ctx context.Context, b *bench, key, status string) (int, error) {
	var page struct {
		Pagination struct{ Total int } `json:"pagination"`
	}
	path := "/api/gen/history?limit=1"
	if status != "" {
		path += "&status=" + status
	}
	err := b.getJSON(ctx, path, key, &page)
	return page.Pagination.Total, err
}

// printOutside prints the wrk figures and the ratios to the bare server
// (the mean of before and after) against issue 38's goals.
func printOutside(out io.Writer, rows []outsideRow) {
	by := map[string]wrkFigures{}
	for _, r := range rows {
		by[r.name] = r.f
	}
	before, after := by["bare (before)"], by["bare (after)"]
	bareRPS := (before.rps + after.rps) / 2
	bareP99 := (before.p99 + after.p99) / 2
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "what\treq/s\tp50\tp90\tp99\tmax\tx bare req/s\tx bare p99\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t\n", r.name, r.f.rps, ms(r.f.p50), ms(r.f.p90), ms(r.f.p99), ms(r.f.max),
			r.f.rps/bareRPS, float64(r.f.p99)/float64(bareP99))
	}
	tw.Flush()
	fmt.Fprintf(out, "bare: %.0f req/s, p99 %s (the mean of before and after)\n", bareRPS, ms(bareP99))
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	st := by["status of a finished task"]
	p1 := by["history page 1"]
	var deep wrkFigures
	for _, r := range rows {
		if strings.HasPrefix(r.name, "history at ") {
			deep = r.f
		}
	}
	fmt.Fprintf(out, "status: %.2fx the bare's req/s (goal >= %.1f: %s), p99 %.2fx (goal <= %.0f: %s)\n",
		st.rps/bareRPS, goalStatusRPS, verdict(st.rps/bareRPS >= goalStatusRPS),
		float64(st.p99)/float64(bareP99), goalStatusP99, verdict(float64(st.p99)/float64(bareP99) <= goalStatusP99))
	fmt.Fprintf(out, "history page 1: %.2fx the bare's req/s (goal >= %.1f: %s)\n", p1.rps/bareRPS, goalHistory, verdict(p1.rps/bareRPS >= goalHistory))
	if deep.rps > 0 {
		fmt.Fprintf(out, "history in depth: %.2fx page 1's cost (goal <= %.1f: %s)\n", p1.rps/deep.rps, goalDepth, verdict(p1.rps/deep.rps <= goalDepth))
	}
	fmt.Fprintln(out)
}

// genProcess is gen-local as make run starts it.
type genProcess struct {
	cmd    *exec.Cmd
	url    string
	env    []string
	log    *os.File
	exited chan error
	done   bool
}

// startGen starts gen-local on a free port of the loopback with data in
// dataDir, the environment's other GEN_* variables left out so that it
// runs with its own defaults, and waits for its first answer. Its log
// goes to a file beside the data, as make run's goes to the terminal.
func startGen(ctx context.Context, bin, dataDir, trace string) (*genProcess, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GEN_") {
			env = append(env, e)
		}
	}
	env = append(env, "GEN_ADDR="+addr, "GEN_DATA_DIR="+dataDir)
	g := &genProcess{url: "http://" + addr, env: env, exited: make(chan error, 1)}
	g.cmd = exec.Command(filepath.Join(bin, "gen-local"))
	g.cmd.Env = env
	if trace != "" {
		abs, err := filepath.Abs(trace)
		if err != nil {
			return nil, err
		}
		g.cmd.Env = append(g.cmd.Env[:len(env):len(env)], "GEN_TRACE="+abs)
	}
	if g.log, err = os.Create(filepath.Join(filepath.Dir(dataDir), "gen-local.log")); err != nil {
		return nil, err
	}
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { g.exited <- g.cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, err := http.Get(g.url + "/api/gen/models")
		if err == nil {
			res.Body.Close()
			return g, nil
		}
		select {
		case err := <-g.exited:
			g.done = true
			log, _ := os.ReadFile(g.log.Name())
			return nil, fmt.Errorf("gen-local exited: %v\n%s", err, bytes.TrimSpace(log))
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("gen-local did not answer on %s in 2 minutes", addr)
		}
	}
}

// stop ends gen-local as Ctrl-C ends make run, and waits for it.
func (g *genProcess) stop() error {
	if g == nil || g.done {
		return nil
	}
	g.done = true
	defer g.log.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.exited:
		if err != nil {
			return fmt.Errorf("gen-local: %w (its log: %s)", err, g.log.Name())
		}
		return nil
	case <-time.After(30 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
		return fmt.Errorf("gen-local did not stop within 30 s of SIGTERM")
	}
}
