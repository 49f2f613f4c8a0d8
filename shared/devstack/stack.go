package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/blob/fsblob"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/localcount"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/render"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/workflow"
)

// Stack is the whole local service.
type Stack struct {
	Store *sqlitestore.Store
	// Counts counts requests in memory: a status poll writes nothing.
	// Day counts reach Store in batches.
	Counts     *localcount.Counter
	Blobs      *fsblob.Store
	Renderer   *render.Renderer
	Executions *workflow.LocalExecutions
	// Sweeper re-drives tasks whose execution is gone and times out those
	// past their deadline: the same sweeper as on AWS, over Executions.
	Sweeper *sweeper.Sweeper
	API     *httpapi.API

	handler http.Handler
	logger  *slog.Logger
	stop    context.CancelFunc
	swept   sync.WaitGroup
}

// New builds the stack on cfg.DataDir and recovers every task a previous
// run left pending or processing (Sweeper.Recover), so that none waits
// forever; then it sweeps every cfg.SweepInterval, as AWS does on a
// schedule.
func New(ctx context.Context, cfg Config) (*Stack, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir
	}
	if cfg.GenerationTimeout <= 0 {
		cfg.GenerationTimeout = DefaultGenerationTimeout
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	renderer, err := render.New(render.Config{FFmpegPath: cfg.FFmpegPath, FontFile: cfg.FontFile,
		MaxConcurrent: cfg.RenderConcurrency})
	if err != nil {
		return nil, err
	}
	st, err := OpenStore(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Stack{Store: st, Renderer: renderer, logger: logger}
	if err := s.build(cfg); err != nil {
		st.Close()
		return nil, err
	}
	if _, err := s.Sweeper.Recover(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("recover unfinished tasks: %w", err)
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.swept.Add(1)
	go s.sweep(sweepCtx, cfg.SweepInterval)
	return s, nil
}

func (s *Stack) build(cfg Config) error {
	gen, err := cfg.generator(s.Renderer)
	if err != nil {
		return err
	}
	secret, err := fsblob.LoadOrCreateSecret(filepath.Join(cfg.DataDir, "signing.key"))
	if err != nil {
		return fmt.Errorf("signing secret: %w", err)
	}
	s.Blobs, err = fsblob.New(filepath.Join(cfg.DataDir, "blobs"), cfg.publicURL(), secret)
	if err != nil {
		return fmt.Errorf("blob storage: %w", err)
	}
	tmp := filepath.Join(cfg.DataDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	st := cfg.Hooks.store(s.Store)
	blobs := cfg.Hooks.blobs(s.Blobs)
	steps := &workflow.Steps{
		Store:     st,
		Blobs:     blobs,
		Generator: cfg.Hooks.generator(gen),
		TempDir:   tmp,
		Logger:    s.logger,
	}
	s.Executions, err = workflow.NewLocalExecutions(steps, asl.WithLogger(s.logger))
	if err != nil {
		return fmt.Errorf("state machine: %w", err)
	}
	s.Counts = localcount.New(localcount.Config{Persister: s.Store, Logger: s.logger,
		Persist: func(c store.Counter) bool { return c.Kind == ratelimit.Day }})
	s.Sweeper = sweeper.New(sweeper.Config{Tasks: st, Failer: steps, Executions: s.Executions, Logger: s.logger})
	s.API = httpapi.New(httpapi.Config{
		Store:             st,
		Blobs:             blobs,
		Executions:        s.Executions,
		Counters:          s.Counts,
		Logger:            s.logger,
		GenerationTimeout: cfg.GenerationTimeout,
		Estimate:          s.Renderer.Estimate,
	})
	mux := http.NewServeMux()
	mux.Handle("/files/", s.Blobs.Handler())
	mux.Handle("/", s.API.Handler())
	s.handler = mux
	return nil
}

// sweep runs the sweeper now and then: it revives tasks whose execution
// was lost, and fails one past its deadline with TIMEOUT, refunded.
func (s *Stack) sweep(ctx context.Context, every time.Duration) {
	defer s.swept.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sweeper.Sweep(ctx); err != nil && !errors.Is(err, context.Canceled) {
				s.logger.Warn("sweep unfinished tasks", "err", err)
			}
		}
	}
}

// Handler serves the API and the signed download links.
func (s *Stack) Handler() http.Handler { return s.handler }

// Close stops the workflow executions and closes the store. Tasks still
// running stay pending or processing, to be re-driven by the next New.
func (s *Stack) Close() error {
	if s.stop != nil {
		s.stop()
		s.swept.Wait()
	}
	if s.Executions != nil {
		s.Executions.Close()
	}
	var err error
	if s.Counts != nil {
		err = s.Counts.Close()
	}
	return errors.Join(err, s.Store.Close())
}
