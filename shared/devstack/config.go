// Package devstack assembles the whole service on one machine, with no
// cloud account: the SQLite store, blobs on the local filesystem with
// signed links served by the same server, the ffmpeg generator, and the
// ASL interpreter running statemachine/generation.asl.json. The HTTP
// handlers and step handlers are the very ones the AWS Lambdas run.
package devstack

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/httpguard"
	"github.com/genvideo/gen/shared/store/sqlitestore"
)

// Defaults of the local service.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultDataDir           = ".gen"
	DefaultGenerationTimeout = 10 * time.Minute
	DefaultSweepInterval     = 30 * time.Second
	DevCredits               = 10000
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
	// FaultRate is the share of generations made to fail, 0..1
	// (GEN_FAULT_RATE).
	FaultRate float64
	// GenerationTimeout is each task's deadline after its creation
	// (GEN_GENERATION_TIMEOUT, a Go duration such as 10m).
	GenerationTimeout time.Duration
	// RenderConcurrency bounds the ffmpeg processes at once
	// (GEN_RENDER_CONCURRENCY, default the number of CPUs).
	RenderConcurrency int
	// SweepInterval is how often unfinished tasks are re-driven
	// (GEN_SWEEP_INTERVAL).
	SweepInterval time.Duration
	// Logger receives the service's structured logs.
	Logger *slog.Logger
	// Hooks wrap the store, blob storage and generator (tests and the soak
	// run only; see Hooks).
	Hooks Hooks
	// Timeouts bound how long a client may take over a request's head and
	// body, and how long a kept-alive connection may idle; zero fields
	// take httpguard's defaults.
	Timeouts httpguard.Timeouts
}

// DataDirFromEnv is GEN_DATA_DIR, or .gen.
func DataDirFromEnv() string {
	if d := os.Getenv("GEN_DATA_DIR"); d != "" {
		return d
	}
	return DefaultDataDir
}

// ConfigFromEnv reads the configuration from the environment. A value that
// does not parse is an error naming the variable, not a silent default.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Addr:              envOr("GEN_ADDR", DefaultAddr),
		DataDir:           DataDirFromEnv(),
		PublicURL:         os.Getenv("GEN_PUBLIC_URL"),
		GenerationTimeout: DefaultGenerationTimeout,
		SweepInterval:     DefaultSweepInterval,
	}
	if v := os.Getenv("GEN_FAULT_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return Config{}, fmt.Errorf("GEN_FAULT_RATE=%q: want a number from 0 to 1", v)
		}
		cfg.FaultRate = f
	}
	for name, dst := range map[string]*time.Duration{
		"GEN_GENERATION_TIMEOUT": &cfg.GenerationTimeout,
		"GEN_SWEEP_INTERVAL":     &cfg.SweepInterval,
	} {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("%s=%q: want a positive duration such as 10m", name, v)
			}
			*dst = d
		}
	}
	if v := os.Getenv("GEN_RENDER_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("GEN_RENDER_CONCURRENCY=%q: want a positive integer", v)
		}
		cfg.RenderConcurrency = n
	}
	return cfg, nil
}

func (c Config) publicURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return "http://" + c.Addr
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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

// LogLevelFromEnv is GEN_LOG_LEVEL (debug, info, warn, error), default info.
func LogLevelFromEnv() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv("GEN_LOG_LEVEL"))); err != nil {
		return slog.LevelInfo
	}
	return l
}
