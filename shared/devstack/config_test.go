package devstack

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
)

// (Malformed values are tested with the AWS stack's, in shared/settings.)
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want Config
	}{
		{"defaults", nil, Config{Addr: DefaultAddr, DataDir: DefaultDataDir, GenerationTimeout: 10 * time.Minute, MaxEventStreams: 5,
			SweepInterval: DefaultSweepInterval, ModelCheckInterval: time.Hour, FFmpegPath: "ffmpeg", LogLevel: slog.LevelInfo}},
		{"every variable", map[string]string{
			"GEN_ADDR": "0.0.0.0:9000", "GEN_DATA_DIR": "/srv/gen", "GEN_PUBLIC_URL": "https://gen.example",
			"GEN_GENERATION_TIMEOUT": "2m", "GEN_SWEEP_INTERVAL": "5s", "GEN_MODEL_CHECK_INTERVAL": "10m", "GEN_RENDER_CONCURRENCY": "3", "GEN_STEP_CONCURRENCY": "12",
			"GEN_FFMPEG_PATH": "/opt/bin/ffmpeg", "GEN_FONT_FILE": "/opt/fonts/f.ttf", "GEN_LOG_LEVEL": "debug",
			"GEN_FAULT_INJECTION": "on", "GEN_FAULT_RATE": "0.5", "GEN_MAX_EVENT_STREAMS": "7",
		}, Config{Addr: "0.0.0.0:9000", DataDir: "/srv/gen", PublicURL: "https://gen.example",
			GenerationTimeout: 2 * time.Minute, MaxEventStreams: 7, SweepInterval: 5 * time.Second, ModelCheckInterval: 10 * time.Minute, RenderConcurrency: 3, StepConcurrency: 12,
			FFmpegPath: "/opt/bin/ffmpeg", FontFile: "/opt/fonts/f.ttf", LogLevel: slog.LevelDebug,
			FaultInjection: true, FaultRate: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(settings.Vars(tt.vars).Lookup)
			if err != nil {
				t.Fatal(err)
			}
			// Logger and Hooks are nil: reflect.DeepEqual compares nil funcs.
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseConfig =\n%+v, want\n%+v", got, tt.want)
			}
		})
	}
}

// Fault injection is off unless asked for, and a fault rate without it
// is an error naming both variables: faults never run by accident, and an
// operator never believes they run when they do not.
func TestParseConfigFaultInjection(t *testing.T) {
	tests := []struct {
		vars      map[string]string
		on        bool
		rate      float64
		errNaming []string
	}{
		{nil, false, 0, nil},
		{map[string]string{"GEN_FAULT_INJECTION": "off"}, false, 0, nil},
		{map[string]string{"GEN_FAULT_INJECTION": "on"}, true, 0, nil},
		{map[string]string{"GEN_FAULT_INJECTION": "TRUE", "GEN_FAULT_RATE": "1"}, true, 1, nil},
		{map[string]string{"GEN_FAULT_RATE": "0"}, false, 0, nil},
		{map[string]string{"GEN_FAULT_RATE": "0.3"}, false, 0, []string{`GEN_FAULT_RATE="0.3"`, "GEN_FAULT_INJECTION=on"}},
		{map[string]string{"GEN_FAULT_INJECTION": "off", "GEN_FAULT_RATE": "0.3"}, false, 0, []string{`GEN_FAULT_RATE="0.3"`, "GEN_FAULT_INJECTION=on"}},
		{map[string]string{"GEN_FAULT_INJECTION": "sometimes"}, false, 0, []string{`GEN_FAULT_INJECTION="sometimes"`, "on or off"}},
	}
	for _, tt := range tests {
		cfg, err := ParseConfig(settings.Vars(tt.vars).Lookup)
		if tt.errNaming != nil {
			if err == nil {
				t.Errorf("ParseConfig(%v) succeeded, want an error", tt.vars)
				continue
			}
			for _, want := range tt.errNaming {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("ParseConfig(%v) = %q, want it to name %s", tt.vars, err, want)
				}
			}
			continue
		}
		if err != nil || cfg.FaultInjection != tt.on || cfg.FaultRate != tt.rate {
			t.Errorf("ParseConfig(%v) = injection %v, rate %g, %v; want %v, %g", tt.vars, cfg.FaultInjection, cfg.FaultRate, err, tt.on, tt.rate)
		}
	}
}

// A program that sets a fault rate without fault injection is refused
// too, not ignored.
func TestNewRefusesFaultRateWithoutInjection(t *testing.T) {
	_, err := New(context.Background(), Config{DataDir: t.TempDir(), FaultRate: 0.5})
	if err == nil || !strings.Contains(err.Error(), "fault injection") {
		t.Errorf("New with FaultRate 0.5 and no FaultInjection = %v, want an error", err)
	}
}
