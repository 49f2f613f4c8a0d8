package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// figures are what one load of one server measured.
type figures struct {
	n int // requests answered in the measured time
	// all2xx counts every 2xx answer, warm-up included: for a start,
	// every task the load created.
	all2xx int
	// unanswered counts every request that got no answer (an error),
	// warm-up included: for a start, one the service may or may not
	// have created a task for.
	unanswered int
	non2xx     int
	errs       int
	elapsed    time.Duration
	p50, p99   time.Duration
	lat        []time.Duration // every latency measured
	// peakRSS is the service's peak resident memory during the load, in
	// bytes: set by the caller, which knows the process.
	peakRSS int64
}

func (f figures) rps() float64 { return float64(f.n) / f.elapsed.Seconds() }

// newRequest makes the i-th request of connection conn.
type newRequest func(conn, i int) *http.Request

// load runs conns connections, each sending its next request as soon as
// the last one is answered (a closed loop, as wrk does), for d after a
// warm-up of warm, and measures the answers of the d. A connection is a
// goroutine with its own kept-alive TCP connection.
func load(ctx context.Context, conns int, warm, d time.Duration, req newRequest) figures {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	start := time.Now().Add(warm)
	stop := start.Add(d)
	lat := make([][]time.Duration, conns)
	non2xx := make([]int, conns)
	errs := make([]int, conns)
	ok := make([]int, conns)
	lost := make([]int, conns)
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				t0 := time.Now()
				if t0.After(stop) || ctx.Err() != nil {
					return
				}
				res, err := client.Do(req(c, i).WithContext(ctx))
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				t1 := time.Now()
				if err == nil && res.StatusCode/100 == 2 {
					ok[c]++
				}
				if err != nil {
					lost[c]++
				}
				if t0.Before(start) || t1.After(stop) {
					continue // warm-up, or past the end
				}
				switch {
				case err != nil:
					errs[c]++
				case res.StatusCode/100 != 2:
					non2xx[c]++
				}
				lat[c] = append(lat[c], t1.Sub(t0))
			}
		}()
	}
	wg.Wait()
	var all []time.Duration
	f := figures{elapsed: d}
	for c := range conns {
		all = append(all, lat[c]...)
		f.non2xx += non2xx[c]
		f.errs += errs[c]
		f.all2xx += ok[c]
		f.unanswered += lost[c]
	}
	f.n = len(all)
	f.p50, f.p99 = percentiles(all)
	f.lat = all
	return f
}

// compare loads the service and the bare server in turns, rounds times
// for d/rounds each, so that whatever else the machine runs meanwhile
// weighs on both alike.
func compare(ctx context.Context, conns, rounds int, warm, d time.Duration, svc, bare newRequest) (s, b figures) {
	for range rounds {
		g := load(ctx, conns, warm, d/time.Duration(rounds), bare)
		b.merge(g, g.lat)
		g = load(ctx, conns, warm, d/time.Duration(rounds), svc)
		s.merge(g, g.lat)
	}
	return s, b
}

// percentiles returns the 50th and 99th percentiles of ds (sorted in place).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return at(0.50), at(0.99)
}

// merge adds g's figures to f's: one measure made in several slices.
func (f *figures) merge(g figures, lat []time.Duration) {
	f.n += g.n
	f.all2xx += g.all2xx
	f.unanswered += g.unanswered
	f.non2xx += g.non2xx
	f.errs += g.errs
	f.elapsed += g.elapsed
	f.lat = append(f.lat, lat...)
	f.p50, f.p99 = percentiles(slices.Clone(f.lat))
}

// sequential sends n requests one after another (one client) and returns
// their figures.
func sequential(ctx context.Context, n int, req newRequest) figures {
	client := &http.Client{Timeout: 30 * time.Second}
	var lat []time.Duration
	f := figures{}
	t := time.Now()
	for i := range n {
		t0 := time.Now()
		res, err := client.Do(req(0, i).WithContext(ctx))
		if err != nil {
			f.errs++
			f.unanswered++
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			f.non2xx++
		} else {
			f.all2xx++
		}
		lat = append(lat, time.Since(t0))
	}
	f.elapsed = time.Since(t)
	f.n = len(lat)
	f.p50, f.p99 = percentiles(lat)
	return f
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
