package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/task"
)

// maxExamples bounds the examples of each kind of finding kept for the
// report.
const maxExamples = 10

// leakMarkers are what must never appear in a response: the injected
// faults' internal detail, and the shapes of Go errors and stack traces.
var leakMarkers = append(slices.Clone(faults.DetailMarkers), "goroutine ", ".go:", "panic:")

// report collects what the clients saw and what the checks found. The
// clients record into it concurrently.
type report struct {
	mu        sync.Mutex
	elapsed   time.Duration
	requests  int
	transport map[string]int             // by endpoint: requests that got no answer
	lastErr   error                      // the last of them
	latency   map[string][]time.Duration // by endpoint
	answers   map[string]int             // by "status CODE"
	started   map[string]bool            // tasks announced with a 202
	leaks     []string
	nLeaks    int
	breaches  []string // answers the contract does not allow
	nBreaches int

	byStatus map[task.Status]int // tasks in the store at the end
	problems []string            // the ledger check's findings
}

func newReport() *report {
	return &report{
		transport: map[string]int{}, latency: map[string][]time.Duration{}, answers: map[string]int{},
		started: map[string]bool{}, byStatus: map[task.Status]int{},
	}
}

// code is the error code of an answer: "error" of the flat body, or
// error.code of the nested 429.
func code(body map[string]any) string {
	switch e := body["error"].(type) {
	case string:
		return e
	case map[string]any:
		c, _ := e["code"].(string)
		return c
	}
	return ""
}

// record counts an answer and checks it: no internal detail in the body,
// a status the request may get (one of expect, or a 500 INTERNAL_ERROR or
// 503 SERVICE_UNAVAILABLE that a fault may cause), and an error body with
// success false and its code.
func (r *report) record(endpoint string, a answer, took time.Duration, expect []int) {
	key := fmt.Sprint(a.status)
	if c := code(a.body); c != "" && a.status >= 400 {
		key += " " + c
	}
	var leak, breach string
	for _, m := range leakMarkers {
		if strings.Contains(string(a.raw), m) {
			leak = fmt.Sprintf("%s %d: %q in %.300s", endpoint, a.status, m, a.raw)
			break
		}
	}
	switch {
	case a.status == 500 && code(a.body) != "INTERNAL_ERROR",
		a.status == 503 && code(a.body) != "SERVICE_UNAVAILABLE":
		breach = fmt.Sprintf("%s: %d with code %q", endpoint, a.status, code(a.body))
	case a.status == 500 || a.status == 503:
	case !slices.Contains(expect, a.status):
		breach = fmt.Sprintf("%s: got %d, want one of %v: %.300s", endpoint, a.status, expect, a.raw)
	case a.status >= 400 && a.status != 429 && (a.body["success"] != false || code(a.body) == ""):
		breach = fmt.Sprintf("%s: %d without the error body: %.300s", endpoint, a.status, a.raw)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.latency[endpoint] = append(r.latency[endpoint], took)
	r.answers[key]++
	if leak != "" {
		r.nLeaks++
		if len(r.leaks) < maxExamples {
			r.leaks = append(r.leaks, leak)
		}
	}
	if breach != "" {
		r.nBreaches++
		if len(r.breaches) < maxExamples {
			r.breaches = append(r.breaches, breach)
		}
	}
}

func (r *report) transportError(endpoint string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transport[endpoint]++
	r.lastErr = err
}

// announce records a task a client was told about with a 202.
func (r *report) announce(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started[id] = true
}

func (r *report) announced(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[id]
}

// Pass reports whether every check passed: the ledger, no leak, nothing
// the contract does not allow.
func (r *report) Pass() bool {
	return len(r.problems) == 0 && r.nLeaks == 0 && r.nBreaches == 0
}

// percentile is the p-th percentile (0..1) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (r *report) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	transport := 0
	for _, n := range r.transport {
		transport += n
	}
	fmt.Fprintf(w, "\nrequests served: %d in %v (%.0f/s); no answer: %d\n",
		r.requests, r.elapsed.Round(time.Millisecond), float64(r.requests)/r.elapsed.Seconds(), transport)

	fmt.Fprintf(w, "\nlatency by endpoint:\n  %-18s %8s %10s %10s %10s\n", "endpoint", "requests", "p50", "p99", "max")
	for _, ep := range slices.Sorted(maps.Keys(r.latency)) {
		d := slices.Clone(r.latency[ep])
		slices.Sort(d)
		fmt.Fprintf(w, "  %-18s %8d %10v %10v %10v\n", ep, len(d),
			percentile(d, 0.5).Round(time.Microsecond*100), percentile(d, 0.99).Round(time.Microsecond*100),
			d[len(d)-1].Round(time.Microsecond*100))
	}

	fmt.Fprintf(w, "\nanswers by status and code:\n")
	for _, k := range slices.Sorted(maps.Keys(r.answers)) {
		fmt.Fprintf(w, "  %-40s %8d\n", k, r.answers[k])
	}
	for _, ep := range slices.Sorted(maps.Keys(r.transport)) {
		fmt.Fprintf(w, "  %-40s %8d\n", "no answer ("+ep+")", r.transport[ep])
	}
	if r.lastErr != nil {
		fmt.Fprintf(w, "  last request with no answer: %v\n", r.lastErr)
	}

	fmt.Fprintf(w, "\ntasks: %d announced; in the store %d completed, %d failed, %d unfinished\n",
		len(r.started), r.byStatus[task.Completed], r.byStatus[task.Failed],
		r.byStatus[task.Pending]+r.byStatus[task.Processing])

	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "\nno internal detail in any answer: %s (%d leaks)\n", verdict(r.nLeaks == 0), r.nLeaks)
	for _, l := range r.leaks {
		fmt.Fprintln(w, "  ", l)
	}
	fmt.Fprintf(w, "every answer allowed by the contract: %s (%d not)\n", verdict(r.nBreaches == 0), r.nBreaches)
	for _, b := range r.breaches {
		fmt.Fprintln(w, "  ", b)
	}
	fmt.Fprintf(w, "ledger check: %s\n", verdict(len(r.problems) == 0))
	for i, p := range r.problems {
		if i == maxExamples {
			fmt.Fprintf(w, "   ... and %d more\n", len(r.problems)-maxExamples)
			break
		}
		fmt.Fprintln(w, "  ", p)
	}
}
