package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The samples in testdata/wrk are wrk 4.1.0's (Debian's package) own
// output, against a small net/http server on this machine.
func TestParseWrk(t *testing.T) {
	tests := []struct {
		file string
		want wrkFigures
		ok   bool
	}{
		{"ok.txt", wrkFigures{rps: 91393.90, requests: 183047, p50: 561 * time.Microsecond, p75: 1350 * time.Microsecond,
			p90: 2640 * time.Microsecond, p99: 8450 * time.Microsecond, max: 33330 * time.Microsecond}, true},
		{"timeouts.txt", wrkFigures{rps: 2.66, requests: 8, socketErrs: 8}, false},
		{"non2xx.txt", wrkFigures{rps: 91357.77, requests: 100419, non2xx: 100419, p50: 123 * time.Microsecond, p75: 403 * time.Microsecond,
			p90: 1220 * time.Microsecond, p99: 5940 * time.Microsecond, max: 11990 * time.Microsecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", "wrk", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseWrk(string(out))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("parseWrk = %+v, want %+v", got, tt.want)
			}
			if got.ok() != tt.ok {
				t.Errorf("ok() = %v, want %v", got.ok(), tt.ok)
			}
		})
	}
}

func TestParseWrkRefuses(t *testing.T) {
	ok, err := os.ReadFile(filepath.Join("testdata", "wrk", "ok.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, out, wantErr string
	}{
		{"no --latency", strings.Replace(string(ok), "99%", "", 1), "no 99%"},
		{"no rate", strings.Replace(string(ok), "Requests/sec:  91393.90\n", "", 1), "no rps"},
		{"a time without unit", strings.Replace(string(ok), "561.00us", "561.00", 1), "no unit"},
		{"a bad socket error line", strings.Replace(string(ok), "Requests/sec:", "  Socket errors: connect x, read 0\nRequests/sec:", 1), "socket errors"},
		{"connection refused", "unable to connect to 127.0.0.1:1 Connection refused\n", "no 50%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWrk(tt.out)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseWrk: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestWrkDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"561.00us", 561 * time.Microsecond},
		{"1.35ms", 1350 * time.Microsecond},
		{"2.01s", 2010 * time.Millisecond},
		{"1.50m", 90 * time.Second},
	}
	for _, tt := range tests {
		if got, err := wrkDuration(tt.in); err != nil || got != tt.want {
			t.Errorf("wrkDuration(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestWrkArgs(t *testing.T) {
	got := strings.Join(wrkArgs(64, 10*time.Second, "http://h/x", map[string]string{"X-API-Key": "k"}), " ")
	if want := "-t2 -c64 -d10s --latency -H X-API-Key: k http://h/x"; got != want {
		t.Errorf("wrkArgs = %q, want %q", got, want)
	}
}

// The bare server's body is the issue's: a status answer's size, about
// 700 bytes, and valid JSON.
func TestStatusSizedBody(t *testing.T) {
	if n := len(statusSized); n < 650 || n > 750 {
		t.Errorf("the bare server's body is %d bytes, want about 700", n)
	}
	if !json.Valid(statusSized) {
		t.Errorf("the bare server's body is not JSON: %s", statusSized)
	}
}
