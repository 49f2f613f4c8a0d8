package devstack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/availability"
	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/blob/fsblob"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/cursor"
	"github.com/genvideo/gen/shared/devstack/localexec"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/intake"
	"github.com/genvideo/gen/shared/localcount"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/playground"
	"github.com/genvideo/gen/shared/provider/factory"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/provider/tables"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/webhook/delivery"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/workflow"
)

// Stack is the whole local service.
type Stack struct {
	Store *sqlitestore.Store
	Blobs *fsblob.Store
	// Counts counts requests in memory: a status poll writes nothing.
	// Day counts reach Store in batches.
	Counts *localcount.Tally

	renderer   *render.Renderer
	executions *localexec.Executions
	// sweeper re-drives tasks whose execution is gone and times out those
	// past their deadline: the same sweeper as on AWS, over executions.
	sweeper *sweeper.Sweeper
	api     *httpapi.API
	// webhooks delivers the outbox (shared/webhook/delivery).
	webhooks *delivery.Worker
	// models checks which models the provider routes serve, and
	// served reads what they found (shared/availability); checking
	// serialises the checks (CheckModels).
	models   *routecheck.Checker
	served   *availability.Reader
	checking sync.Mutex

	handler http.Handler
	logger  *slog.Logger
	stop    context.CancelFunc
	swept   sync.WaitGroup

	// dataDir, tmpDir (render work) and leftoverAge: see cleanLeftovers.
	dataDir, tmpDir string
	leftoverAge     time.Duration
	// uninstall puts back the catalog New replaced with the operator's
	// (GEN_MODELS), nil when it replaced none.
	uninstall func()
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
	s := &Stack{Store: st, renderer: renderer, logger: logger, dataDir: cfg.DataDir, leftoverAge: leftoverAge(cfg.Timeouts)}
	if cfg.Provider.OwnCatalog() {
		// The stack's models (GEN_MODELS, our Omni model) are the
		// process's catalog (package catalog says why), in place
		// before anything reads it.
		s.uninstall = catalog.Install(cfg.Provider.Catalog())
	}
	if err := s.build(ctx, cfg); err != nil {
		s.uninstallCatalog()
		st.Close()
		return nil, err
	}
	s.cleanLeftovers(ctx)
	if _, err := s.sweeper.Recover(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("recover unfinished tasks: %w", err)
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.swept.Add(1)
	go s.sweep(sweepCtx, cfg.SweepInterval)
	// The routes' models: checked now, in the background (a slow
	// provider does not hold up the start-up), then every interval.
	s.swept.Add(1)
	go s.checkModels(sweepCtx, cmp.Or(cfg.ModelCheckInterval, DefaultModelCheckInterval))
	// Webhooks: delivered as moves write them, and what a previous run
	// left due is picked up at once.
	s.swept.Add(1)
	go func() {
		defer s.swept.Done()
		poll := cfg.WebhookPoll
		if poll <= 0 {
			poll = webhookPoll
		}
		s.webhooks.Run(sweepCtx, s.Store.Events(), poll)
	}()
	return s, nil
}

// stepsPerCPU is the workflow steps running at once per CPU, unless
// GEN_STEP_CONCURRENCY says: a provider's step mostly waits on the
// network (a submit, a poll, a download), a local one (storing a video,
// completing a task) takes a CPU for a millisecond or two.
const stepsPerCPU = 8

func (s *Stack) build(ctx context.Context, cfg Config) error {
	gen, err := cfg.generator(s.renderer)
	if err != nil {
		return err
	}
	// The models' provider routes (GEN_ROUTES; without it the one
	// backend GEN_GENERATOR selects), each checked now.
	routes, err := factory.FromSettings(ctx, cfg.Provider, factory.Options{Builtin: cfg.Hooks.generator(gen),
		Veo: veo.Options{FFmpegPath: cmp.Or(cfg.FFmpegPath, "ffmpeg")}, Now: cfg.Hooks.RouteClock, Logger: s.logger})
	if err == nil {
		err = routes.Verify(ctx)
	}
	if err != nil {
		return fmt.Errorf("generator %s: %w", cfg.Provider.Generator, err)
	}
	provider, caps := cfg.Hooks.provider(routes.Provider), routes.Capabilities
	// Which models the routes serve: checked here (checkModels), kept in
	// the store as on AWS, and read by every start and GET models.
	s.models = &routecheck.Checker{Store: s.Store, Probes: routes.Probes, Logger: s.logger}
	s.served = availability.NewReader(availability.ReaderConfig{Store: s.Store, Routes: tables.Availability(cfg.Provider), Logger: s.logger})
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
	s.tmpDir = tmp
	st := cfg.Hooks.store(s.Store)
	blobs := cfg.Hooks.blobs(s.Blobs)
	steps := &workflow.Steps{
		Store:     st,
		Blobs:     blobs,
		Generator: cfg.Hooks.generator(gen),
		Provider:  provider,
		// Posters are made with the renderer's ffmpeg, whichever generates.
		Posters: workflow.NewFFmpegPosters(cfg.FFmpegPath, 0),
		TempDir: tmp,
		Logger:  s.logger,
	}
	running := cfg.StepConcurrency
	if running == 0 {
		running = stepsPerCPU * runtime.GOMAXPROCS(0)
	}
	s.executions, err = localexec.New(steps, asl.WithLogger(s.logger), asl.WithTaskConcurrency(running))
	if err != nil {
		return fmt.Errorf("state machine: %w", err)
	}
	s.Counts = localcount.New(localcount.Config{Persister: s.Store, Logger: s.logger,
		Persist: func(c domain.Window) bool { return c.Kind == ratelimit.Day }})
	s.sweeper = sweeper.New(sweeper.Config{Tasks: st, Failer: steps, Executions: s.executions, Logger: s.logger})
	// The renderer's estimate is the built-in generator's seconds; a Veo
	// job (or the bench's provider, standing for one) takes minutes,
	// which the service's default estimate says, as it does on AWS.
	estimate := s.renderer.Estimate
	if provider != nil {
		estimate = nil
	}
	svc := service.New(service.Config{
		Store:             st,
		Blobs:             blobs,
		Executions:        s.executions,
		Images:            intake.New(blobs, 0),
		Limiter:           s.Counts,
		Logger:            s.logger,
		GenerationTimeout: cfg.GenerationTimeout,
		MaxEventStreams:   cfg.MaxEventStreams,
		Estimate:          estimate,
		// Direct uploads go to the local server, as they go to S3 on AWS.
		Uploads:             s.Blobs,
		Webhooks:            s.Store,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		WebhookResolver:     cfg.WebhookResolver,
		Capabilities:        caps,
		Availability:        s.served,
	})
	// Cursors are sealed with a key derived from the data directory's
	// signing secret: they survive a restart, as links do.
	s.api = httpapi.New(svc, httpapi.Config{CursorKeys: cursor.Static{secret}})
	s.webhooks = &delivery.Worker{Outbox: s.Store, Logger: s.logger,
		Sender: &webhook.Sender{AllowPrivate: cfg.WebhookAllowPrivate}}
	// The playground plays the signed links and posts direct uploads to
	// the public URL, which is the page's own origin unless GEN_PUBLIC_URL
	// names another.
	origin, err := playground.Origin(cfg.publicURL())
	if err != nil {
		return fmt.Errorf("playground: %w", err)
	}
	page, err := playground.Handler(playground.Config{MediaOrigins: []string{origin}, Logger: s.logger})
	if err != nil {
		return err
	}
	// MCP over Streamable HTTP: the tools call the API above in-process
	// with the caller's key, and fetch images by URL under the webhooks'
	// rules.
	agents := mcpserver.NewHandler(mcpserver.HTTPConfig{API: s.api.Handler(), Keys: svc, Logger: s.logger,
		Options: mcpserver.Options{Fetcher: mcpserver.URLFetcher(cfg.WebhookAllowPrivate)}})
	s.handler = cfg.Hooks.handler(route(s.Blobs.Handler(), s.Blobs.UploadHandler(), page, agents, s.api.Handler()))
	return nil
}

// webhookPoll is the longest the local worker waits between looks at
// the outbox by default (Config.WebhookPoll): moves and replays wake it
// at once, and it wakes when the earliest retry is due.
const webhookPoll = 30 * time.Second

// route sends the signed links to files, the signed direct uploads to
// uploads, the playground (/ and its files under /playground/) to page,
// /mcp to agents, and everything else to api. It is
// no http.ServeMux: that would answer a path with a dot segment or a
// doubled slash (/files/../x, //api/gen/models) with a redirect and an
// HTML body before the API could answer it, and every answer of the
// service is one of the contract's JSON bodies. A path that is not in
// canonical form goes to the API, which answers it as an unknown route.
func route(files, uploads, page, agents, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		switch {
		case r.Method == http.MethodConnect:
			// Not a path at all (CONNECT host:port); the API's router
			// would leave it to ServeMux's plain-text 404.
			httpapi.WriteError(w, &httpapi.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
				Message: "no such endpoint: CONNECT"})
		case strings.HasPrefix(p, fsblob.PathPrefix) && canonical(p):
			files.ServeHTTP(w, r)
		case p == fsblob.UploadPath:
			uploads.ServeHTTP(w, r)
		case p == "/" || strings.HasPrefix(p, playground.AssetPrefix) && canonical(p):
			page.ServeHTTP(w, r)
		case p == mcpserver.Path:
			agents.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// canonical reports whether an escaped path has no dot segment and no
// empty one (a trailing slash aside).
func canonical(p string) bool {
	c := path.Clean(p)
	return p == c || p == c+"/"
}

// sweep runs the sweeper now and then: it revives tasks whose execution
// was lost, and fails one past its deadline with TIMEOUT, refunded. Each
// sweep also removes what a killed process left (cleanLeftovers).
func (s *Stack) sweep(ctx context.Context, every time.Duration) {
	defer s.swept.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.sweeper.Sweep(ctx); err != nil && !errors.Is(err, context.Canceled) {
				s.logger.Warn("sweep unfinished tasks", "err", err)
			}
			s.cleanLeftovers(ctx)
		}
	}
}

// checkModels checks the routes' models now and then every interval,
// until ctx ends.
func (s *Stack) checkModels(ctx context.Context, every time.Duration) {
	defer s.swept.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.CheckModels(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("check which models the provider routes serve", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckModels asks each provider route now which of its models it
// serves, and writes what each found (routecheck.Checker); what the
// stack sells follows at once. The stack runs it at start-up and every
// Config.ModelCheckInterval; a test runs it when its fake changed.
func (s *Stack) CheckModels(ctx context.Context) error {
	s.checking.Lock()
	defer s.checking.Unlock()
	defer s.served.Forget()
	return s.models.Check(ctx)
}

// Wait blocks until no workflow execution is running, for a caller that
// wants every generation it started to have ended (the bench).
func (s *Stack) Wait() { s.executions.Wait() }

// Handler serves the API, the signed download links and uploads, and the
// playground.
func (s *Stack) Handler() http.Handler { return s.handler }

// Close stops the workflow executions and closes the store. Tasks still
// running stay pending or processing, to be re-driven by the next New.
func (s *Stack) Close() error {
	if s.stop != nil {
		s.stop()
		s.swept.Wait()
	}
	if s.executions != nil {
		s.executions.Close()
	}
	var err error
	if s.Counts != nil {
		err = s.Counts.Close()
	}
	s.uninstallCatalog()
	return errors.Join(err, s.Store.Close())
}

// uninstallCatalog puts back the catalog New found, so that a test's
// next stack starts from it.
func (s *Stack) uninstallCatalog() {
	if s.uninstall != nil {
		s.uninstall()
		s.uninstall = nil
	}
}
