// Command bench measures the local service where clients wait, next to a
// bare net/http server on the same machine in the same run: status
// polling, starts, history pages of an account with 10,000 tasks (on
// SQLite through the server, and on DynamoDB Local through the store),
// models, with the service's peak memory beside each (it runs as a child
// process, child.go); then the same on an account of a million tasks with
// the service's start-up on that data (scale.go), and the endpoint
// Lambdas' sizes and init times. It prints
// first what AWS charges per 1,000 generations (infra/costmodel, from
// template.yaml), then one table; `make bench` runs it. Nothing here is a test: no figure is
// asserted, the table is read by people (infra/docs/performance.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"time"

	"github.com/genvideo/gen/infra/costmodel"
)

// startPattern is the route of the start workload.
const startPattern = "POST /api/gen/text-to-video"

type config struct {
	conns     int
	duration  time.Duration
	warm      time.Duration
	rounds    int
	generator string
	latency   time.Duration
	tasks     int
	dynamo    bool
	lambdas   bool
	keep      bool
	only      string
	scale     int
	// outside measures first as issue 38 did (outside.go).
	outside bool
	// dynamoScale is the scale account's size on DynamoDB Local.
	dynamoScale int
	profile     string
	// memProfile is where the service writes a heap profile (and the
	// goroutines' beside it) at the end of each starts load.
	memProfile string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.conns, "conns", 64, "connections of each load")
	flag.DurationVar(&cfg.duration, "duration", 6*time.Second, "how long each load is measured, per server")
	flag.DurationVar(&cfg.warm, "warm", 500*time.Millisecond, "warm-up before each measure")
	flag.IntVar(&cfg.rounds, "rounds", 3, "turns of bare server and service each load is split in")
	flag.StringVar(&cfg.generator, "generator", "remote",
		"what generates the videos of the starts: remote (the bench's stand-in for a provider's API: no local CPU) or ffmpeg (the local renderer)")
	flag.DurationVar(&cfg.latency, "latency", 5*time.Second, "how long the remote generator takes for a generation")
	flag.IntVar(&cfg.tasks, "tasks", 10000, "tasks of the history account")
	flag.BoolVar(&cfg.dynamo, "dynamodb", true, "also measure history pages on DynamoDB Local")
	flag.BoolVar(&cfg.lambdas, "lambdas", true, "also measure the endpoint Lambdas' size and init")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the data directory")
	flag.StringVar(&cfg.only, "only", "", "run only the HTTP workloads whose name contains this")
	flag.StringVar(&cfg.profile, "cpuprofile", "", "write a CPU profile of the service process (its whole life; the HTTP loads dominate) to this file")
	flag.StringVar(&cfg.memProfile, "memprofile", "", "write a heap profile of the service process at the end of each starts load, when the most generations are in flight, to this file (the goroutines' profile and the runtime's memory figures beside it: .goroutine, .memstats); the last load's is kept")
	flag.IntVar(&cfg.scale, "scale", 1_000_000, "tasks of the scale workload's account (0: no scale workload)")
	flag.IntVar(&cfg.dynamoScale, "dynamodb-scale", 50_000, "tasks of the scale account on DynamoDB Local (at most -tasks: none)")
	burstN := flag.Int("burst", 0, "measure only this many concurrent starts on one account on the AWS assembly (DynamoDB Local), three times, and stop")
	burstAfford := flag.Int("burst-afford", 30, "starts the -burst account can pay for")
	var oc outsideConfig
	flag.BoolVar(&cfg.outside, "outside", true, "first measure as issue 38 did from outside: wrk against gen-local with its defaults, next to a bare net/http server (-only outside: this alone)")
	flag.DurationVar(&oc.duration, "wrk-duration", 10*time.Second, "wrk's -d of each measure from outside")
	flag.IntVar(&oc.tasks, "wrk-tasks", 7000, "tasks the bursts of starts fill the history account to, from outside")
	flag.IntVar(&oc.depth, "wrk-depth", 6700, "the deep history page's first task, from outside")
	flag.DurationVar(&oc.settle, "settle", 12*time.Minute, "the longest to wait, after the fill, for its generations to end before measuring the history from outside (the default generation deadline is 10 minutes)")
	flag.StringVar(&oc.trace, "trace", "", "have gen-local write a runtime trace of the measure from outside to this file (GEN_TRACE); read it with go tool trace")
	serve := flag.Bool("serve", false, "be the service process the bench starts (child.go), not the bench")
	flag.Parse()
	if *serve {
		if err := serveChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "bench -serve:", err)
			os.Exit(1)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if *burstN > 0 {
		if err := burst(ctx, *burstN, *burstAfford, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	oc.conns, oc.burstConns, oc.burst, oc.keep = cfg.conns, 16, 2*time.Second, cfg.keep
	if cfg.outside && strings.Contains("outside", cfg.only) {
		if err := outside(ctx, oc, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if cfg.only == "outside" {
			return
		}
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "gen bench: %s, %s/%s, %d CPUs (GOMAXPROCS %d), %s, load average %s\n%d connections, %v per load and server in %d turns (each after %v warm-up), generator %s (latency %v)\n\n",
		host, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), strings.TrimSpace(string(load)),
		cfg.conns, cfg.duration, cfg.rounds, cfg.warm, cfg.generator, cfg.latency)

	// What AWS charges per generation, from template.yaml's figures
	// (infra/costmodel): no measurement, so it comes first.
	if st, err := costmodel.FromTemplate("."); err != nil {
		fmt.Fprintf(out, "cost model: %v (run from the checkout's root)\n\n", err)
	} else {
		costmodel.Print(out, st, costmodel.Assumed, costmodel.USEast1)
		fmt.Fprintln(out)
	}

	b, err := setUp(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.http(ctx, out); err != nil {
		return err
	}
	// -only picks the scale workload by its name, scale.
	if cfg.scale > 0 && strings.Contains("scale", cfg.only) {
		if err := b.scaleWorkload(ctx, out); err != nil {
			return err
		}
	}
	if cfg.dynamo {
		if err := dynamoHistory(ctx, cfg, out); err != nil {
			return err
		}
	}
	if cfg.lambdas {
		if err := lambdas(ctx, out); err != nil {
			return err
		}
	}
	return nil
}
