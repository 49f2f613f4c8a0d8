// Package devstack assembles the whole service on one machine, with no
// cloud account: the SQLite store, blobs on the local filesystem with
// signed links served by the same server, the ffmpeg generator, and the
// ASL interpreter running statemachine/generation.asl.json. The HTTP
// handlers and step handlers are the very ones the AWS Lambdas run.
package devstack

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/devkey"
	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/httpguard"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/webhook"
)

// The variables only the local service reads, besides those of
// settings.Shared.
const (
	EnvAddr          = "GEN_ADDR"
	EnvDataDir       = "GEN_DATA_DIR"
	EnvPublicURL     = "GEN_PUBLIC_URL"
	EnvSweepInterval = "GEN_SWEEP_INTERVAL"
	// EnvModelCheckInterval is how often each provider route is asked
	// which of its models it serves (shared/availability), after the
	// check at start-up.
	EnvModelCheckInterval = "GEN_MODEL_CHECK_INTERVAL"
	EnvRenderConcurrency  = "GEN_RENDER_CONCURRENCY"
	EnvStepConcurrency    = "GEN_STEP_CONCURRENCY"
	// EnvFaultInjection turns fault injection on: on or off (also
	// true/false, 1/0), default off. See Config.FaultInjection.
	EnvFaultInjection = "GEN_FAULT_INJECTION"
	// EnvFaultRate is the share of generations made to fail, 0..1; above
	// 0 it needs EnvFaultInjection on.
	EnvFaultRate = "GEN_FAULT_RATE"
)

// Defaults of the local service.
const (
	DefaultAddr    = "127.0.0.1:8080"
	DefaultDataDir = ".gen"
	// DefaultGenerationTimeout is settings' default, named here for New.
	DefaultGenerationTimeout = settings.DefaultGenerationTimeout
	DefaultSweepInterval     = 30 * time.Second
	// maxSweepInterval keeps a typo from leaving lost tasks alone for days.
	maxSweepInterval = 24 * time.Hour
	// DefaultModelCheckInterval is availability's.
	DefaultModelCheckInterval = routecheck.DefaultInterval
	DevCredits                = devkey.Credits
)

// Config of the local stack. ConfigFromEnv reads it from GEN_* variables.
type Config struct {
	// Addr is where the server listens (GEN_ADDR).
	Addr string
	// DataDir holds the database, the blobs and the signing secret
	// (GEN_DATA_DIR).
	DataDir string
	// PublicURL is the base of signed download links (GEN_PUBLIC_URL,
	// default http://Addr).
	PublicURL string
	// FaultInjection makes the generator obey the fault directives of
	// prompts ("[fail]", "[slow:30]": see faults.Directives) and fail
	// FaultRate of the generations (GEN_FAULT_INJECTION). It is off by
	// default, so that a customer's prompt is only ever a prompt; tests
	// and the walk-through's failure step turn it on.
	FaultInjection bool
	// WebhookAllowPrivate lets webhooks go to plain http and private
	// addresses, such as a receiver on this machine
	// (GEN_WEBHOOK_ALLOW_PRIVATE, default off).
	WebhookAllowPrivate bool
	// FaultRate is the share of generations made to fail, 0..1
	// (GEN_FAULT_RATE). Above 0 it needs FaultInjection.
	FaultRate float64
	// GenerationTimeout is each task's deadline after its creation
	// (GEN_GENERATION_TIMEOUT, a Go duration such as 10m).
	GenerationTimeout time.Duration
	// MaxEventStreams is how many live event streams one key may hold
	// open at once (GEN_MAX_EVENT_STREAMS; 0: the service's default, 5).
	MaxEventStreams int
	// RenderConcurrency bounds the ffmpeg processes at once
	// (GEN_RENDER_CONCURRENCY, default the number of CPUs).
	RenderConcurrency int
	// StepConcurrency bounds the workflow's steps running at once, across
	// every generation (GEN_STEP_CONCURRENCY; 0: stepsPerCPU per CPU), as
	// the generate function's reserved concurrency does on AWS: a burst
	// of starts is answered while the generations it queued wait their
	// turn, rather than every step of thousands of them taking the CPUs
	// and the database's one writer from the requests in flight.
	StepConcurrency int
	// SweepInterval is how often unfinished tasks are re-driven
	// (GEN_SWEEP_INTERVAL).
	SweepInterval time.Duration
	// ModelCheckInterval is how often the provider routes are asked
	// which models they serve (GEN_MODEL_CHECK_INTERVAL), besides at
	// start-up.
	ModelCheckInterval time.Duration
	// FFmpegPath and FontFile are the generator's ffmpeg binary and
	// caption font (GEN_FFMPEG_PATH, GEN_FONT_FILE); empty means ffmpeg on
	// PATH and render.DefaultFontFile.
	FFmpegPath, FontFile string
	// Provider selects and configures the generator (GEN_GENERATOR and
	// the GEN_VERTEX_*, GEN_GEMINI_* and GEN_PROVIDER_MODELS variables);
	// its zero value is the built-in ffmpeg generator.
	Provider settings.ProviderConfig
	// LogLevel is the level of the logs gen-local writes (GEN_LOG_LEVEL);
	// New logs to Logger whatever its level.
	LogLevel slog.Level
	// Logger receives the service's structured logs.
	Logger *slog.Logger
	// Hooks wrap the store, blob storage, generator and provider (tests,
	// the soak run and the bench only; see Hooks).
	Hooks Hooks
	// WebhookResolver resolves webhook URLs' hosts at registration
	// (default net.DefaultResolver); tests inject one.
	WebhookResolver webhook.Resolver
	// WebhookPoll is the longest the webhook worker sleeps between looks
	// at the outbox (default 30 s): moves and replays wake it at once,
	// which tests show by setting it to hours.
	WebhookPoll time.Duration
	// Timeouts bound how long a client may take over a request's head and
	// body, and how long a kept-alive connection may idle; zero fields
	// take httpguard's defaults.
	Timeouts httpguard.Timeouts
}

// DataDirFromEnv is GEN_DATA_DIR, or .gen.
func DataDirFromEnv() string {
	return settings.NewReader(os.LookupEnv).String(EnvDataDir, DefaultDataDir)
}

// ConfigFromEnv reads the configuration from the environment; see
// ParseConfig.
func ConfigFromEnv() (Config, error) { return ParseConfig(os.LookupEnv) }

// ParseConfig reads the configuration through lookup. A value that does
// not parse is an error naming the variable, not a silent default, and
// every such value is reported at once.
func ParseConfig(lookup func(string) (string, bool)) (Config, error) {
	r := settings.NewReader(lookup)
	shared := r.Shared()
	cfg := Config{
		Addr:               r.String(EnvAddr, DefaultAddr),
		DataDir:            r.String(EnvDataDir, DefaultDataDir),
		PublicURL:          r.Check(EnvPublicURL, isBaseURL, "want an http:// or https:// URL such as http://127.0.0.1:8080"),
		FaultRate:          r.Float(EnvFaultRate, 0, 0, 1),
		GenerationTimeout:  shared.GenerationTimeout,
		MaxEventStreams:    shared.MaxEventStreams,
		RenderConcurrency:  int(r.PositiveInt(EnvRenderConcurrency, 0)),
		StepConcurrency:    int(r.PositiveInt(EnvStepConcurrency, 0)),
		SweepInterval:      r.Duration(EnvSweepInterval, DefaultSweepInterval, maxSweepInterval),
		ModelCheckInterval: r.Duration(EnvModelCheckInterval, DefaultModelCheckInterval, maxSweepInterval),
		FFmpegPath:         shared.FFmpegPath,
		FontFile:           shared.FontFile,
		LogLevel:           shared.LogLevel,
		Provider:           r.ProviderConfig(),
	}
	if g := cfg.Provider.Generator; (g == settings.GeneratorGemini || g == settings.GeneratorOmni) && cfg.Provider.GeminiAPIKey == "" {
		r.Reject(settings.GeminiAPIKey, "", "the "+g+" generator needs the Gemini API key")
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		r.Reject(EnvAddr, cfg.Addr, "want host:port, such as "+DefaultAddr)
	}
	cfg.FaultInjection = r.Switch(EnvFaultInjection, false)
	cfg.WebhookAllowPrivate = r.Switch(settings.WebhookAllowPrivate, false)
	if cfg.FaultRate > 0 && !cfg.FaultInjection {
		// An operator must not believe faults run when they do not.
		r.Reject(EnvFaultRate, r.String(EnvFaultRate, ""),
			"takes effect only with fault injection on: set "+EnvFaultInjection+"=on as well, or unset "+EnvFaultRate)
	}
	if err := r.Err(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// generator is the renderer as the workflow gets it: with shared/faults'
// directives around it when fault injection is on.
func (c Config) generator(r *render.Renderer) (provider.Generator, error) {
	if !c.FaultInjection {
		if c.FaultRate != 0 {
			return nil, fmt.Errorf("a fault rate of %g needs fault injection on (Config.FaultInjection, %s=on)", c.FaultRate, EnvFaultInjection)
		}
		return r, nil
	}
	return faults.WrapDirectives(r, faults.DirectiveConfig{FailureRate: c.FaultRate})
}

// isBaseURL reports whether s is an absolute http(s) URL.
func isBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (c Config) publicURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return "http://" + c.Addr
}

// StorePath is the SQLite database inside a data directory.
func StorePath(dataDir string) string { return filepath.Join(dataDir, "gen.db") }

// OpenStore opens (creating if needed) the store of a data directory.
func OpenStore(dataDir string) (*sqlitestore.Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	s, err := sqlitestore.Open(StorePath(dataDir))
	if err != nil {
		return nil, fmt.Errorf("open store in %s: %w", dataDir, err)
	}
	return s, nil
}
