package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/testing/workflowtest"
)

// TestSmoke runs the soak's whole loop briefly, with faults on and a fake
// generator: 5 clients for 2 seconds, every check passing.
func TestSmoke(t *testing.T) {
	cfg := defaultConfig()
	cfg.clients = 5
	cfg.duration = 2 * time.Second
	cfg.drain = 2 * time.Minute
	cfg.think = 5 * time.Millisecond
	cfg.seed = 1
	cfg.depFaultRate = 0.05
	cfg.wrapGenerator = func(provider.Generator) provider.Generator { return &workflowtest.Generator{} }
	var out bytes.Buffer
	rep, err := run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !rep.Pass() {
		t.Errorf("the soak failed its checks:\n%s", out.String())
	}
	// Each client starts a generation first.
	if rep.requests < cfg.clients || len(rep.started) == 0 {
		t.Errorf("%d requests, %d tasks started: want the clients to have worked\n%s", rep.requests, len(rep.started), out.String())
	}
	finished := rep.byStatus["completed"] + rep.byStatus["failed"]
	if finished < len(rep.started) || rep.byStatus["pending"]+rep.byStatus["processing"] != 0 {
		t.Errorf("tasks at the end %v, want all %d announced ones finished", rep.byStatus, len(rep.started))
	}
	for _, want := range []string{"requests served:", "latency by endpoint:", "p99", "answers by status and code:", "ledger check: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	t.Log(out.String())
}

// TestRecordChecks feeds the report answers that break the contract: each
// is caught.
func TestRecordChecks(t *testing.T) {
	tests := []struct {
		name           string
		a              answer
		expect         []int
		leaks, breachs int
	}{
		{"allowed", answer{status: 200, raw: []byte(`{"success":true}`)}, []int{200}, 0, 0},
		{"outage anywhere", answer{status: 503, raw: []byte(`{"success":false,"error":"SERVICE_UNAVAILABLE","message":"m"}`)}, []int{200}, 0, 0},
		{"leak", answer{status: 500, raw: []byte(`{"success":false,"error":"INTERNAL_ERROR","message":"x: /var/lib/gen/gen.db"}`)}, nil, 1, 0},
		{"stack trace", answer{status: 500, raw: []byte(`{"error":"INTERNAL_ERROR","message":"goroutine 7 [running]"}`)}, nil, 1, 0},
		{"500 with another code", answer{status: 500, raw: []byte(`{"success":false,"error":"OOPS","message":"m"}`)}, nil, 0, 1},
		{"unexpected status", answer{status: 202, raw: []byte(`{"success":true}`)}, []int{400}, 0, 1},
		{"error without its body", answer{status: 404, raw: []byte(`not found`)}, []int{404}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReport()
			r.record("x", decoded(tt.a), time.Millisecond, tt.expect)
			if r.nLeaks != tt.leaks || r.nBreaches != tt.breachs {
				t.Errorf("%d leaks, %d breaches; want %d, %d", r.nLeaks, r.nBreaches, tt.leaks, tt.breachs)
			}
			if got := r.Pass(); got != (tt.leaks+tt.breachs == 0) {
				t.Errorf("Pass = %v", got)
			}
		})
	}
}

func decoded(a answer) answer {
	a.body = map[string]any{}
	if err := json.Unmarshal(a.raw, &a.body); err != nil {
		a.body = nil
	}
	return a
}

func TestRemoteIsLoopbackOnly(t *testing.T) {
	for _, u := range []string{"http://example.com:8080", "http://10.0.0.7", "not a url"} {
		if _, err := remote(config{baseURL: u, dataDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "GEN_BASE_URL") {
			t.Errorf("remote(%q): %v, want a refusal naming GEN_BASE_URL", u, err)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentile(d, tt.p); got != tt.want {
			t.Errorf("percentile(1..100, %v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
}
