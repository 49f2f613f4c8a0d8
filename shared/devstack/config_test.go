package devstack

import (
	"log/slog"
	"reflect"
	"testing"
	"time"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// (Malformed values are tested with the AWS stack's, in shared/settings.)
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want Config
	}{
		{"defaults", nil, Config{Addr: DefaultAddr, DataDir: DefaultDataDir, GenerationTimeout: 10 * time.Minute,
			SweepInterval: DefaultSweepInterval, FFmpegPath: "ffmpeg", LogLevel: slog.LevelInfo}},
		{"every variable", map[string]string{
			"GEN_ADDR": "0.0.0.0:9000", "GEN_DATA_DIR": "/srv/gen", "GEN_PUBLIC_URL": "https://gen.example",
			"GEN_GENERATION_TIMEOUT": "2m", "GEN_SWEEP_INTERVAL": "5s", "GEN_RENDER_CONCURRENCY": "3",
			"GEN_FFMPEG_PATH": "/opt/bin/ffmpeg", "GEN_FONT_FILE": "/opt/fonts/f.ttf", "GEN_LOG_LEVEL": "debug",
			"GEN_FAULT_RATE": "0.5",
		}, Config{Addr: "0.0.0.0:9000", DataDir: "/srv/gen", PublicURL: "https://gen.example",
			GenerationTimeout: 2 * time.Minute, SweepInterval: 5 * time.Second, RenderConcurrency: 3,
			FFmpegPath: "/opt/bin/ffmpeg", FontFile: "/opt/fonts/f.ttf", LogLevel: slog.LevelDebug, FaultRate: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(lookup(tt.vars))
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
