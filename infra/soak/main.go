// Command soak runs hundreds of clients against the service for a bounded
// time with faults on, then waits for every task to finish and prints what
// was served: requests, errors by status and code, p50/p99 latency per
// endpoint, tasks completed and failed, and the ledger check (PASS/FAIL;
// the exit status is 1 on FAIL). `make soak` runs it.
//
// By default it starts the local stack in this process on a temporary
// data directory, with fault injection on (the prompt directives, and
// GEN_FAULT_RATE of the generations failed at random) and shared/faults
// decorators around the store, blob storage and generator. With
// GEN_BASE_URL (a loopback address only) it drives a server started
// elsewhere, e.g. by `make run`, whose data directory (GEN_DATA_DIR) it
// opens to create its key and to check the ledger; the faults are then
// whatever that server was started with (none unless GEN_FAULT_INJECTION=on).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"
)

func main() {
	cfg := defaultConfig()
	flag.IntVar(&cfg.clients, "clients", cfg.clients, "concurrent clients")
	flag.DurationVar(&cfg.duration, "duration", cfg.duration, "how long the clients send requests")
	flag.DurationVar(&cfg.drain, "drain", cfg.drain, "how long to wait afterwards for the tasks to finish")
	flag.Float64Var(&cfg.depFaultRate, "dep-fault-rate", cfg.depFaultRate,
		"share of store, blob and generator calls that fail (in-process stack only)")
	flag.IntVar(&cfg.renderConcurrency, "render-concurrency", cfg.renderConcurrency, "ffmpeg processes at once (GEN_RENDER_CONCURRENCY)")
	flag.IntVar(&cfg.maxInFlight, "max-in-flight", cfg.maxInFlight, "the soak key's generations pending or processing at once")
	flag.DurationVar(&cfg.think, "think", cfg.think, "mean pause of a client between requests")
	flag.Uint64Var(&cfg.seed, "seed", cfg.seed, "seed of the clients' choices and of the injected faults")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temporary data directory (and its soak.log)")
	flag.Parse()

	if err := configFromEnv(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !rep.Pass() {
		os.Exit(1)
	}
}

// configFromEnv reads GEN_BASE_URL, GEN_DATA_DIR, GEN_FAULT_RATE and
// GEN_RENDER_CONCURRENCY; a value that does not parse is an error.
func configFromEnv(cfg *config) error {
	cfg.baseURL = os.Getenv("GEN_BASE_URL")
	if cfg.baseURL != "" {
		cfg.dataDir = os.Getenv("GEN_DATA_DIR")
		if cfg.dataDir == "" {
			cfg.dataDir = ".gen"
		}
	}
	if v := os.Getenv("GEN_FAULT_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("GEN_FAULT_RATE=%q: want a number from 0 to 1", v)
		}
		cfg.faultRate = f
	}
	if v := os.Getenv("GEN_RENDER_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("GEN_RENDER_CONCURRENCY=%q: want a positive integer", v)
		}
		cfg.renderConcurrency = n
	}
	return nil
}

// defaultConfig is a minute of 200 clients on two ffmpeg processes.
func defaultConfig() config {
	return config{
		clients:           200,
		duration:          60 * time.Second,
		drain:             5 * time.Minute,
		faultRate:         0.05,
		depFaultRate:      0.01,
		renderConcurrency: 2,
		maxInFlight:       8,
		think:             20 * time.Millisecond,
		seed:              uint64(time.Now().UnixNano()),
	}
}
