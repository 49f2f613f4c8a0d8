package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/provider"
)

// The service runs in a child process, the bench binary again with
// -serve: the stack as `make run` serves it (devstack.Serve, the same
// guarded server, request log and start-up), with the bench's generator.
// Apart from the load generator and the bare server, its memory is its
// own: /proc/<pid>/status's VmHWM is the service's peak RSS, reset
// before each workload through /proc/<pid>/clear_refs.

// serveChild is the child: it serves GEN_DATA_DIR on GEN_ADDR until
// SIGTERM, and prints what `make run` prints (the line "gen is running
// on <url>" tells the parent where).
func serveChild(cfg config) error {
	dc, err := devstack.ParseConfig(os.LookupEnv)
	if err != nil {
		return err
	}
	devstack.TuneRuntime(os.LookupEnv) // make run's
	dc.PublicURL = ""
	dc.SweepInterval = time.Hour
	dc.FaultInjection = false
	var closeLog func() error
	dc.Logger, closeLog = devstack.NewLogger(os.Stderr, dc.LogLevel) // make run's
	defer closeLog()
	switch cfg.generator {
	case "remote":
		dc.Hooks.WrapProvider = func(provider.Provider) provider.Provider { return remote{latency: cfg.latency} }
	case "ffmpeg":
	default:
		return fmt.Errorf("-generator %q: want remote or ffmpeg", cfg.generator)
	}
	if cfg.profile != "" {
		f, err := os.Create(cfg.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.memProfile != "" {
		// The parent signals when the generations in flight peak.
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		defer signal.Stop(usr1)
		go func() {
			for range usr1 {
				if err := writeMemProfiles(cfg.memProfile); err != nil {
					fmt.Fprintln(os.Stderr, "bench -serve: memory profile:", err)
				}
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return devstack.Serve(ctx, dc, os.Stdout)
}

// writeMemProfiles writes the heap profile (after a GC, so that it shows
// what is held) to path, the goroutines' to path.goroutine and the runtime's
// memory figures to path.memstats.
func writeMemProfiles(path string) error {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	summary := fmt.Sprintf("goroutines %d\nheap in use %d\nstacks in use %d\nheap idle %d (released %d)\nsys %d\n",
		runtime.NumGoroutine(), ms.HeapInuse, ms.StackInuse, ms.HeapIdle, ms.HeapReleased, ms.Sys)
	if err := os.WriteFile(path+".memstats", []byte(summary), 0o600); err != nil {
		return err
	}
	for name, p := range map[string]string{"heap": path, "goroutine": path + ".goroutine"} {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		err = pprof.Lookup(name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s profile: %w", name, err)
		}
	}
	return nil
}

// profileMemory asks the service for its memory profiles (-memprofile)
// and gives it a moment to write them.
func (c *child) profileMemory(cfg config) {
	if cfg.memProfile == "" {
		return
	}
	c.cmd.Process.Signal(syscall.SIGUSR1)
	time.Sleep(2 * time.Second)
}

// child is the service process the parent started.
type child struct {
	cmd *exec.Cmd
	url string
	// startUp is from the process's start to its first answer.
	startUp time.Duration
	done    chan error
}

// startChild starts the service on dataDir and waits for its first
// answer.
func startChild(ctx context.Context, cfg config, dataDir string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", "-generator", cfg.generator, "-latency", cfg.latency.String()}
	if cfg.profile != "" {
		// The service's whole life, set-up included: what it spends
		// serving the loads dominates.
		args = append(args, "-cpuprofile", cfg.profile)
	}
	if cfg.memProfile != "" {
		args = append(args, "-memprofile", cfg.memProfile)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), devstack.EnvDataDir+"="+dataDir, devstack.EnvAddr+"=127.0.0.1:0")
	// The request log goes where make run's goes, a file here: its cost
	// is part of the service's.
	cmd.Stderr = nil // /dev/null
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the service: %w", err)
	}
	c := &child{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "gen is running on "); ok {
			c.url = u
			break
		}
	}
	go func() {
		io.Copy(io.Discard, stdout)
		c.done <- cmd.Wait()
	}()
	if c.url == "" {
		c.stop()
		return nil, errors.New("the service exited before serving (run make run to see why)")
	}
	for {
		res, err := http.Get(c.url + "/api/gen/models")
		if err == nil {
			res.Body.Close()
			break
		}
		select {
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case err := <-c.done:
			return nil, fmt.Errorf("the service exited: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	c.startUp = time.Since(t0)
	return c, nil
}

// stop ends the service as an operator's Ctrl-C would, and waits.
func (c *child) stop() {
	if c == nil || c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// resetPeak starts a new peak RSS (clear_refs: 5 resets VmHWM to the
// current RSS). Where the kernel refuses, peaks are since the start.
func (c *child) resetPeak() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", c.cmd.Process.Pid), []byte("5"), 0)
}

// peakRSS is the service's VmHWM, in bytes (0 if unreadable).
func (c *child) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
