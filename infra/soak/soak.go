package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/task"
)

// The bounds of a run.
const (
	maxClients  = 5000
	maxDuration = time.Hour
)

// config of one soak run.
type config struct {
	// baseURL is the server to drive; empty starts the stack in-process.
	baseURL string
	// dataDir is the data directory: the remote server's, or for the
	// in-process stack an existing one to use instead of a temporary one.
	dataDir string

	clients  int
	duration time.Duration
	drain    time.Duration
	think    time.Duration
	seed     uint64

	// faultRate is the share of generations failed at random by the
	// prompt directives' decorator (the in-process stack turns fault
	// injection on, so that the clients' [transient] and [filter] work).
	faultRate float64
	// depFaultRate is the share of store, blob and generator calls the
	// faults decorators break.
	depFaultRate      float64
	renderConcurrency int
	maxInFlight       int
	keep              bool

	// wrapGenerator, when set, wraps (or replaces) the renderer: the smoke
	// test puts a fast fake there.
	wrapGenerator func(provider.Generator) provider.Generator
}

// target is the service under test and what the soak needs of it.
type target struct {
	baseURL string
	store   store.Store      // the bare store, for the key and the check
	inj     *faults.Injector // nil against a remote server
	stack   *devstack.Stack  // nil against a remote server
	close   func() error     // stops what start started
}

// run runs the soak and prints its report to out. The error reports a
// soak that could not run; a run whose checks fail returns a report that
// does not Pass.
func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	// Bounded, so that a typo cannot leave it running for days.
	if cfg.clients < 1 || cfg.clients > maxClients || cfg.duration <= 0 || cfg.duration > maxDuration || cfg.drain > maxDuration {
		return nil, fmt.Errorf("want 1 to %d clients for at most %v (and a drain of at most %v), got %d clients for %v",
			maxClients, maxDuration, maxDuration, cfg.clients, cfg.duration)
	}
	tg, err := start(ctx, cfg, out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := tg.close(); err != nil {
			fmt.Fprintln(out, "soak: stop:", err)
		}
	}()

	keys, err := makeKeys(ctx, tg.store, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "soak: %d clients for %v against %s (seed %d, GEN_FAULT_RATE %g, dependency faults %g)\n",
		cfg.clients, cfg.duration, tg.baseURL, cfg.seed, cfg.faultRate, faultsRate(cfg, tg))

	rep := newReport()
	began := time.Now()
	drive(ctx, cfg, tg.baseURL, keys, rep)
	rep.elapsed = time.Since(began)

	// The outage ends; the service finishes what was started.
	if tg.inj != nil {
		tg.inj.Reset()
	}
	fmt.Fprintf(out, "soak: clients stopped after %v; waiting up to %v for the tasks to finish\n", rep.elapsed.Round(time.Millisecond), cfg.drain)
	if err := waitFinished(ctx, tg, keys.main.AccountID, cfg.drain); err != nil {
		rep.problems = append(rep.problems, err.Error())
	}
	if err := rep.audit(ctx, tg.store, keys.main.AccountID); err != nil {
		return nil, err
	}
	rep.print(out)
	return rep, nil
}

func faultsRate(cfg config, tg *target) float64 {
	if tg.inj == nil {
		return 0
	}
	return cfg.depFaultRate
}

// start starts the in-process stack, or opens the remote server's store.
func start(ctx context.Context, cfg config, out io.Writer) (*target, error) {
	if cfg.baseURL != "" {
		return remote(cfg)
	}
	dir, cleanup := cfg.dataDir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gen-soak-")
		if err != nil {
			return nil, fmt.Errorf("temp data dir: %w", err)
		}
		dir = tmp
		cleanup = func() {
			if cfg.keep {
				fmt.Fprintln(out, "soak: data kept in", dir)
				return
			}
			os.RemoveAll(dir)
		}
	}
	logFile, err := os.Create(filepath.Join(dir, "soak.log"))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("log file: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logFile.Close()
		cleanup()
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}

	inj := faults.NewInjector()
	setFaults(inj, cfg)
	wrapGen := func(g provider.Generator) provider.Generator {
		if cfg.wrapGenerator != nil {
			g = cfg.wrapGenerator(g)
		}
		return faults.WrapGenerator(g, inj)
	}
	stack, err := devstack.New(ctx, devstack.Config{
		Addr:              ln.Addr().String(),
		DataDir:           dir,
		FaultInjection:    true,
		FaultRate:         cfg.faultRate,
		RenderConcurrency: cfg.renderConcurrency,
		SweepInterval:     5 * time.Second,
		Logger:            slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Hooks: devstack.Hooks{
			WrapStore:     func(s store.Store) store.Store { return faults.WrapStore(s, inj) },
			WrapBlobs:     func(b blob.Store) blob.Store { return faults.WrapBlobs(b, inj) },
			WrapGenerator: wrapGen,
		},
	})
	if err != nil {
		ln.Close()
		logFile.Close()
		cleanup()
		return nil, err
	}
	srv := &http.Server{Handler: stack.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return &target{
		baseURL: "http://" + ln.Addr().String(),
		store:   stack.Store,
		inj:     inj,
		stack:   stack,
		close: func() error {
			shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := srv.Shutdown(shutdown)
			if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
				err = errors.Join(err, serr)
			}
			err = errors.Join(err, stack.Close(), logFile.Close())
			cleanup()
			return err
		},
	}, nil
}

// setFaults breaks cfg.depFaultRate of the calls at each boundary, in
// every way the service must survive: outages, lost replies, errors,
// panics and delays in the store; outages and delays in blob storage;
// transient and lasting failures, refusals and slowness in the generator.
func setFaults(inj *faults.Injector, cfg config) {
	if cfg.depFaultRate <= 0 {
		return
	}
	inj.Set("Store.*", faults.Random(cfg.seed+1, cfg.depFaultRate,
		faults.Fault{Err: faults.Unavailable()},
		faults.Fault{Err: faults.Unavailable()},
		faults.Fault{Err: faults.Unavailable(), After: true},
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Panic: faults.Detail},
		faults.Fault{Delay: 50 * time.Millisecond}))
	inj.Set("Blobs.*", faults.Random(cfg.seed+2, cfg.depFaultRate,
		faults.Fault{Err: faults.Unavailable()},
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Delay: 50 * time.Millisecond}))
	inj.Set("Generator.*", faults.Random(cfg.seed+3, 5*cfg.depFaultRate,
		faults.Fault{Err: faults.Transient()},
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Err: faults.Refused()},
		faults.Fault{Delay: 2 * time.Second}))
}

// remote checks that baseURL is on this machine and opens its store.
func remote(cfg config) (*target, error) {
	u, err := url.Parse(cfg.baseURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("GEN_BASE_URL=%q: want a URL such as http://127.0.0.1:8080", cfg.baseURL)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("GEN_BASE_URL=%q: the soak only sends loopback traffic; run it on the server's machine", cfg.baseURL)
	}
	if _, err := os.Stat(devstack.StorePath(cfg.dataDir)); err != nil {
		return nil, fmt.Errorf("the server's store (set GEN_DATA_DIR to its data directory): %w", err)
	}
	st, err := devstack.OpenStore(cfg.dataDir)
	if err != nil {
		return nil, err
	}
	return &target{baseURL: u.Scheme + "://" + u.Host, store: st, close: st.Close}, nil
}

// keys are the soak's API keys: main does the work; other belongs to
// another account and reads main's tasks, which must be 404s.
type keys struct {
	main, other admin.CreatedKey
}

func makeKeys(ctx context.Context, st store.Store, cfg config) (keys, error) {
	a := admin.New(st)
	main, err := a.CreateKey(ctx, admin.KeyRequest{
		Name: "soak", Credits: 100_000_000, Tier: ratelimit.Enterprise,
		// High enough that the soak measures the service, not its limiter;
		// the in-flight limit keeps the render queue as long as a client
		// would see it.
		Limits: store.KeyLimits{RequestsPerMinute: 10_000_000, RequestsPerDay: 1_000_000_000,
			StartsPerMinute: 1_000_000, MaxInFlight: cfg.maxInFlight},
	})
	if err != nil {
		return keys{}, fmt.Errorf("create the soak key: %w", err)
	}
	other, err := a.CreateKey(ctx, admin.KeyRequest{Name: "soak intruder", Tier: ratelimit.Enterprise,
		Limits: store.KeyLimits{RequestsPerMinute: 10_000_000, RequestsPerDay: 1_000_000_000}})
	if err != nil {
		return keys{}, fmt.Errorf("create the second key: %w", err)
	}
	return keys{main: main, other: other}, nil
}

// waitFinished waits until the account has nothing pending or processing,
// re-driving unfinished tasks now and then as the sweep does.
func waitFinished(ctx context.Context, tg *target, accountID string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		a, err := tg.store.Account(ctx, accountID)
		if err == nil && a.InFlight == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d tasks still unfinished %v after the clients stopped", a.InFlight, limit)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for the tasks: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// audit checks the books of the account once everything has finished:
// audit.Account's invariants, every task finished, every announced task
// in the store, and every task the client was not told about (its start
// answered an error) failed and refunded in full.
func (r *report) audit(ctx context.Context, st store.Store, accountID string) error {
	problems, err := audit.Account(ctx, st, accountID)
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	r.problems = append(r.problems, problems...)
	tasks, _, err := st.Tasks(ctx, accountID, store.TaskQuery{})
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	inStore := map[string]bool{}
	for _, t := range tasks {
		inStore[t.ID] = true
		r.byStatus[t.Status]++
		switch {
		case !t.Status.Terminal():
			r.problems = append(r.problems, fmt.Sprintf("task %s is still %s", t.ID, t.Status))
		case !r.announced(t.ID) && (t.Status != task.Failed || t.CreditsRefunded != t.CreditsCost):
			r.problems = append(r.problems, fmt.Sprintf("task %s was never announced with a 202, but it is %s, refunded %d of %d",
				t.ID, t.Status, t.CreditsRefunded, t.CreditsCost))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.started {
		if !inStore[id] {
			r.problems = append(r.problems, fmt.Sprintf("task %s was announced with a 202 but is not in the store", id))
		}
	}
	return nil
}
