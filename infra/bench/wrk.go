package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// wrkFigures are what one wrk run printed with --latency.
type wrkFigures struct {
	rps                float64
	requests           int
	p50, p75, p90, p99 time.Duration
	max                time.Duration
	// non2xx counts wrk's "Non-2xx or 3xx responses"; socketErrs its
	// "Socket errors" (connect, read, write and timeouts together). A
	// figure with either above zero measured failures, not answers.
	non2xx, socketErrs int
}

// ok says whether every request of the run got a 2xx or 3xx answer.
func (f wrkFigures) ok() bool { return f.requests > 0 && f.non2xx == 0 && f.socketErrs == 0 }

// wrkArgs are the flags: two threads, 64 connections, 10 s,
// the latency distribution. The headers go before the URL.
func wrkArgs(conns int, d time.Duration, url string, headers map[string]string) []string {
	args := []string{"-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(d.Round(time.Second)/time.Second)), "--latency"}
	for k, v := range headers {
		args = append(args, "-H", k+": "+v)
	}
	return append(args, url)
}

// runWrk runs wrk and returns its parsed figures and its output.
func runWrk(ctx context.Context, conns int, d time.Duration, url string, headers map[string]string) (wrkFigures, string, error) {
	out, err := exec.CommandContext(ctx, "wrk", wrkArgs(conns, d, url, headers)...).CombinedOutput()
	if err != nil {
		return wrkFigures{}, string(out), fmt.Errorf("wrk %s: %w: %s", url, err, out)
	}
	f, err := parseWrk(string(out))
	if err != nil {
		return wrkFigures{}, string(out), fmt.Errorf("wrk %s: %w", url, err)
	}
	return f, string(out), nil
}

// parseWrk reads the figures from wrk 4's output with --latency:
//
//	  Latency Distribution
//	     50%  561.00us
//	...
//	  183047 requests in 2.00s, 21.12MB read
//	  Non-2xx or 3xx responses: 12
//	  Socket errors: connect 0, read 0, write 0, timeout 8
//	Requests/sec:  91393.90
func parseWrk(out string) (wrkFigures, error) {
	var f wrkFigures
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		var err error
		switch {
		case len(fields) == 2 && strings.HasSuffix(fields[0], "%") && !strings.HasPrefix(line, "Latency"):
			var d time.Duration
			if d, err = wrkDuration(fields[1]); err != nil {
				break
			}
			switch fields[0] {
			case "50%":
				f.p50 = d
			case "75%":
				f.p75 = d
			case "90%":
				f.p90 = d
			case "99%":
				f.p99 = d
			}
			seen[fields[0]] = true
		case len(fields) >= 4 && fields[0] == "Latency":
			// Thread Stats: Avg, Stdev, Max, +/- Stdev.
			f.max, err = wrkDuration(fields[3])
		case len(fields) >= 3 && fields[1] == "requests" && fields[2] == "in":
			f.requests, err = strconv.Atoi(fields[0])
			seen["requests"] = true
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			f.non2xx, err = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")))
		case strings.HasPrefix(line, "Socket errors:"):
			// connect 0, read 0, write 0, timeout 8
			for _, part := range strings.Split(strings.TrimPrefix(line, "Socket errors:"), ",") {
				kv := strings.Fields(part)
				if len(kv) != 2 {
					return f, fmt.Errorf("socket errors %q", line)
				}
				n, aerr := strconv.Atoi(kv[1])
				if aerr != nil {
					return f, fmt.Errorf("socket errors %q: %w", line, aerr)
				}
				f.socketErrs += n
			}
		case strings.HasPrefix(line, "Requests/sec:"):
			f.rps, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
			seen["rps"] = true
		}
		if err != nil {
			return f, fmt.Errorf("wrk line %q: %w", line, err)
		}
	}
	for _, want := range []string{"50%", "99%", "requests", "rps"} {
		if !seen[want] {
			return f, fmt.Errorf("no %s in wrk's output (was it run with --latency?)", want)
		}
	}
	return f, nil
}

// wrkDuration reads one of wrk's times: 561.00us, 1.35ms, 2.01s, 1.50m.
func wrkDuration(s string) (time.Duration, error) {
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("time %q: %w", s, err)
			}
			return time.Duration(math.Round(v * float64(u.unit))), nil
		}
	}
	return 0, fmt.Errorf("time %q: no unit", s)
}
