// Package service holds the use cases of the public API, the same on both
// stacks: authenticate a caller and count its request, start a generation
// (charge and create it in one store transaction, replay or refuse an
// Idempotency-Key, take over a start that never ran, compensate a start
// the workflow did not take), read a task and its download links, list
// the history and the models. It knows nothing of HTTP: shared/httpapi
// maps requests to these calls and their errors (errors.go) to the
// contract's bodies, and each stack hands it its store, blob storage and
// workflow.
package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/webhook"
)

// Store is the part of store.Store the use cases need.
type Store interface {
	KeyByHash(ctx context.Context, hash string) (store.Key, error)
	Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error)
	// Count reads a window without taking from it: the starts window
	// that Credits reports.
	Count(ctx context.Context, c domain.Window, at time.Time) (int, error)
	CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (domain.Charged, error)
	Task(ctx context.Context, id string) (task.Task, error)
	Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error)
	Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error)
	// Of the account's credits (manage.go):
	Account(ctx context.Context, id string) (domain.Account, error)
	LedgerPage(ctx context.Context, accountID string, q store.LedgerQuery) ([]domain.LedgerEntry, error)
	Held(ctx context.Context, accountID string) (int64, error)
	DeleteTask(ctx context.Context, id string) (task.Task, error)
	// SetKeyCaps changes a key's spending caps (caps.go).
	SetKeyCaps(ctx context.Context, id string, u store.CapsUpdate) (store.SpendCaps, error)
	// The leases of a key's open event streams (streams.go).
	OpenStream(ctx context.Context, w domain.Window, lease string, at time.Time) (int, error)
	RenewStream(ctx context.Context, key, lease string, expires time.Time) error
	CloseStream(ctx context.Context, key, lease string) error
}

// Links signs download links: blob.Store's SignURL.
type Links interface {
	SignURL(ctx context.Context, key string, expires time.Time) (string, error)
}

// Limiter takes a request's rate-limit windows with store.Store's Take
// semantics: all or none, a *domain.LimitError naming an exhausted one.
// The store itself is one; the local stack counts in memory instead
// (localcount.Tally), so that a request writes nothing.
type Limiter interface {
	Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error)
}

// Executions runs the workflow that generates a task: Step Functions on
// AWS, the ASL interpreter locally.
type Executions interface {
	// Start starts the workflow of a freshly created task.
	Start(ctx context.Context, t task.Task) error
	// Stop stops the workflow of a task the client cancelled, so that it
	// makes no further call to the provider. The task is already failed:
	// a step that still runs finds it terminal and changes nothing.
	Stop(ctx context.Context, t task.Task) error
}

// Defaults of Config.
const (
	DefaultGenerationTimeout = settings.DefaultGenerationTimeout
	DefaultRetryAfter        = 5 * time.Second
	DefaultMaxEventStreams   = settings.DefaultMaxEventStreams
)

// Config is what a Service is built from. Store is required; every
// other field has a default or is optional.
type Config struct {
	Store Store
	// Blobs keeps the images and the videos and signs their links: the
	// starts, status, download, delete and direct uploads use it. A
	// service without it (an AWS Lambda serving models, history,
	// credits or webhooks) serves the other use cases, and links no
	// blob storage.
	Blobs blob.Store
	// Links signs the videos' download links (status, download); by
	// default Blobs. On AWS a Lambda that signs links and keeps no
	// object gives it alone (shared/blob/s3links), without the S3 client
	// that Blobs brings.
	Links Links
	// Executions starts and stops the workflows. A service without it
	// starts nothing (an AWS Lambda serving status, say, serves no
	// start): Start refuses with ErrNoExecutions, before any charge, and
	// Cancel cannot stop a workflow, which then ends at its next step.
	Executions Executions
	// Limiter takes the rate-limit windows of requests (default Store).
	Limiter Limiter
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger // default slog.Default()
	// GenerationTimeout sets a task's deadline: createdAt + this.
	GenerationTimeout time.Duration
	// Estimate gives the range a generation is expected to take, for the
	// start's estimatedWaitTime and the polling hint.
	Estimate func(params.Parameters) (min, max time.Duration)
	// RetryAfter is the longest polling hint of an unfinished task.
	RetryAfter time.Duration
	// Uploads signs direct uploads (CreateUpload); nil means none.
	Uploads Uploads
	// MaxUploadBytes bounds a direct upload (DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// Images checks and stores the images a start brings, streamed in
	// its form or copied from a direct upload (shared/intake). A service
	// without it (every AWS Lambda but the image starts') refuses them
	// with a 503, and links no image checks.
	Images ImageIntake
	// Webhooks keeps webhook endpoints and their deliveries; nil answers
	// the webhook endpoints, and a start carrying webhookUrl, 503.
	Webhooks store.Webhooks
	// WebhookAllowPrivate accepts plain http and private addresses in
	// webhook URLs (GEN_WEBHOOK_ALLOW_PRIVATE, local development only).
	WebhookAllowPrivate bool
	// WebhookResolver resolves webhook URLs' hosts (default
	// net.DefaultResolver).
	WebhookResolver webhook.Resolver
	// MaxEventStreams is how many event streams one key may hold open
	// at once (DefaultMaxEventStreams; GEN_MAX_EVENT_STREAMS).
	MaxEventStreams int
	// Capabilities are what the configured generator accepts (veo.
	// Capabilities reads them from the settings); a start outside them is
	// refused before it is charged. Default capability.Builtin().
	Capabilities capability.Table
	// Availability says which models no provider route serves right now
	// (shared/availability): a start of one is refused before it is
	// charged, and models shows it unavailable. nil: every model sells.
	Availability Availability
}

// Availability is the set of our models no provider route serves right
// now (availability.Reader). The set is shared: callers only read it.
type Availability interface {
	Unavailable(ctx context.Context) map[string]bool
}

// Service serves the use cases. Build it with New.
type Service struct {
	cfg Config
	log *slog.Logger
}

// New builds a Service, filling in Config's defaults. A Config without
// Store is a wiring bug: New panics.
func New(cfg Config) *Service {
	if cfg.Store == nil {
		panic("service.New: Config.Store is nil")
	}
	if cfg.Limiter == nil {
		cfg.Limiter = cfg.Store
	}
	if cfg.Links == nil && cfg.Blobs != nil {
		cfg.Links = cfg.Blobs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.GenerationTimeout <= 0 {
		cfg.GenerationTimeout = DefaultGenerationTimeout
	}
	if cfg.Estimate == nil {
		cfg.Estimate = defaultEstimate
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.MaxEventStreams <= 0 {
		cfg.MaxEventStreams = DefaultMaxEventStreams
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.Capabilities.Models == nil {
		cfg.Capabilities = capability.Builtin()
	}
	return &Service{cfg: cfg, log: cfg.Logger}
}

// Config is the service's configuration with New's defaults filled in:
// what the layer above it reads (the logger).
func (s *Service) Config() Config { return s.cfg }

// Now reads the service's clock: a request takes one reading and uses it
// throughout (Caller.Now).
func (s *Service) Now() time.Time { return s.cfg.Now() }

// Estimate is the range a generation of p is expected to take.
func (s *Service) Estimate(p params.Parameters) (min, max time.Duration) { return s.cfg.Estimate(p) }

// PollHint is the Retry-After of an unfinished task: RetryAfter, or the
// least time the generation is expected to take when that is shorter, so
// that a client is not told to wait 5 s for a video made in 2; never
// under a second.
func (s *Service) PollHint(t task.Task) time.Duration {
	hint := s.cfg.RetryAfter
	if lo, _ := s.cfg.Estimate(t.Params); lo < hint {
		hint = lo
	}
	return max(hint, time.Second)
}

// defaultEstimate is the wait announced when Config names no estimator:
// generous bounds for one to two 8-second videos.
func defaultEstimate(params.Parameters) (min, max time.Duration) {
	return 60 * time.Second, 180 * time.Second
}
