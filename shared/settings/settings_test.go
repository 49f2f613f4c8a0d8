package settings_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/settings"
)

func isOK(s string) bool { return s == "ok" }

// Each reader: its value, its default when unset or empty, and a
// rejection naming the variable and the value when malformed.
func TestReaders(t *testing.T) {
	const name = "GEN_X"
	tests := []struct {
		reader string
		value  string
		read   func(r *settings.Reader) any
		want   any
		bad    bool
	}{
		{"String", "  a b  ", func(r *settings.Reader) any { return r.String(name, "d") }, "a b", false},
		{"String unset", "", func(r *settings.Reader) any { return r.String(name, "d") }, "d", false},
		{"Check", "ok", func(r *settings.Reader) any { return r.Check(name, isOK, "want ok") }, "ok", false},
		{"Check bad", "ko", func(r *settings.Reader) any { return r.Check(name, isOK, "want ok") }, "ko", true},
		{"Duration", "90s", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, 90 * time.Second, false},
		{"Duration unset", "", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Minute, false},
		{"Duration at the bound", "1h", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Hour, false},
		{"Duration over the bound", "61m", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Minute, true},
		{"Duration zero", "0s", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Minute, true},
		{"Duration negative", "-1m", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Minute, true},
		{"Duration without unit", "10", func(r *settings.Reader) any { return r.Duration(name, time.Minute, time.Hour) }, time.Minute, true},
		{"PositiveInt", "3", func(r *settings.Reader) any { return r.PositiveInt(name, 7) }, int64(3), false},
		{"PositiveInt unset", "", func(r *settings.Reader) any { return r.PositiveInt(name, 7) }, int64(7), false},
		{"PositiveInt zero", "0", func(r *settings.Reader) any { return r.PositiveInt(name, 7) }, int64(7), true},
		{"PositiveInt with a unit", "4MB", func(r *settings.Reader) any { return r.PositiveInt(name, 7) }, int64(7), true},
		{"Float", "0.25", func(r *settings.Reader) any { return r.Float(name, 0, 0, 1) }, 0.25, false},
		{"Float at the bound", "1", func(r *settings.Reader) any { return r.Float(name, 0, 0, 1) }, 1.0, false},
		{"Float over the bound", "1.5", func(r *settings.Reader) any { return r.Float(name, 0, 0, 1) }, 0.0, true},
		{"Float NaN", "NaN", func(r *settings.Reader) any { return r.Float(name, 0, 0, 1) }, 0.0, true},
		{"Level", "debug", func(r *settings.Reader) any { return r.Level(name, slog.LevelInfo) }, slog.LevelDebug, false},
		{"Level upper case", "WARN", func(r *settings.Reader) any { return r.Level(name, slog.LevelInfo) }, slog.LevelWarn, false},
		{"Level unset", "", func(r *settings.Reader) any { return r.Level(name, slog.LevelInfo) }, slog.LevelInfo, false},
		{"Level unknown", "LOUD", func(r *settings.Reader) any { return r.Level(name, slog.LevelInfo) }, slog.LevelInfo, true},
		{"Switch on", "on", func(r *settings.Reader) any { return r.Switch(name, false) }, true, false},
		{"Switch ON", "ON", func(r *settings.Reader) any { return r.Switch(name, false) }, true, false},
		{"Switch true", "true", func(r *settings.Reader) any { return r.Switch(name, false) }, true, false},
		{"Switch 1", "1", func(r *settings.Reader) any { return r.Switch(name, false) }, true, false},
		{"Switch off", "off", func(r *settings.Reader) any { return r.Switch(name, true) }, false, false},
		{"Switch 0", "0", func(r *settings.Reader) any { return r.Switch(name, true) }, false, false},
		{"Switch unset", "", func(r *settings.Reader) any { return r.Switch(name, false) }, false, false},
		{"Switch unknown", "yes please", func(r *settings.Reader) any { return r.Switch(name, false) }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.reader, func(t *testing.T) {
			r := settings.NewReader(settings.Vars{name: tt.value}.Lookup)
			if got := tt.read(r); got != tt.want {
				t.Errorf("%s(%q) = %v, want %v", tt.reader, tt.value, got, tt.want)
			}
			err := r.Err()
			if tt.bad != (err != nil) {
				t.Fatalf("%s(%q): error %v, want an error: %v", tt.reader, tt.value, err, tt.bad)
			}
			if err != nil && !strings.Contains(err.Error(), name+"=") {
				t.Errorf("error %q does not name %s", err, name)
			}
		})
	}
}

// Both stacks read the environment the same way: every malformed value
// is reported, each naming its variable and value, all at once, and the
// variables they share are read with the same defaults and the same
// words.
func TestBothStacks(t *testing.T) {
	sharedBad := map[string]string{
		settings.GenerationTimeout: "10",
		settings.LogLevel:          "LOUD",
		settings.MaxEventStreams:   "0",
	}
	parsers := []struct {
		stack string
		parse func(func(string) (string, bool)) error
		bad   map[string]string // one malformed value of every variable that can have one
	}{
		{"local", func(l func(string) (string, bool)) error { _, err := devstack.ParseConfig(l); return err }, map[string]string{
			devstack.EnvAddr:              "8080",
			devstack.EnvPublicURL:         "localhost:8080",
			devstack.EnvSweepInterval:     "-30s",
			devstack.EnvRenderConcurrency: "two",
			devstack.EnvFaultRate:         "1.5",
		}},
		{"aws", func(l func(string) (string, bool)) error { _, err := awsstack.ParseEnv(l); return err }, map[string]string{
			awsstack.EnvTablePrefix:     "gen prod",
			awsstack.EnvBucket:          "s3://gen-media",
			awsstack.EnvStateMachineARN: "arn:aws:lambda:eu-west-1:123456789012:function:x",
			awsstack.EnvSignerSecretARN: "gen-signer",
			awsstack.EnvMaxImageBytes:   "4MB",
		}},
	}
	for _, p := range parsers {
		bad := map[string]string{}
		for _, m := range []map[string]string{sharedBad, p.bad} {
			for k, v := range m {
				bad[k] = v
			}
		}
		t.Run(p.stack+" reports every bad value at once", func(t *testing.T) {
			err := p.parse(settings.Vars(bad).Lookup)
			if err == nil {
				t.Fatal("no error")
			}
			for name, value := range bad {
				if !strings.Contains(err.Error(), name+"="+`"`+value+`"`) {
					t.Errorf("error %q does not name %s=%q", err, name, value)
				}
			}
		})
		for name, value := range bad {
			t.Run(p.stack+" "+name, func(t *testing.T) {
				err := p.parse(settings.Vars{name: value}.Lookup)
				if err == nil || !strings.Contains(err.Error(), name+"=") || strings.Count(err.Error(), "=") != 1 {
					t.Errorf("%s=%q alone: error %v, want one naming it alone", name, value, err)
				}
			})
		}
		t.Run(p.stack+" accepts an empty environment", func(t *testing.T) {
			if err := p.parse(settings.Vars(nil).Lookup); err != nil {
				t.Errorf("no variable set: %v", err)
			}
		})
	}

	// The shared variables: the same default and the same rejection.
	cfg, err := devstack.ParseConfig(settings.Vars(nil).Lookup)
	if err != nil {
		t.Fatal(err)
	}
	env, err := awsstack.ParseEnv(settings.Vars(nil).Lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := settings.NewReader(settings.Vars(nil).Lookup).Shared()
	local := settings.Shared{GenerationTimeout: cfg.GenerationTimeout, LogLevel: cfg.LogLevel, FFmpegPath: cfg.FFmpegPath, FontFile: cfg.FontFile, MaxEventStreams: cfg.MaxEventStreams}
	aws := settings.Shared{GenerationTimeout: env.GenerationTimeout, LogLevel: env.LogLevel, FFmpegPath: env.FFmpegPath, FontFile: env.FontFile, MaxEventStreams: env.MaxEventStreams}
	if local != want || aws != want {
		t.Errorf("defaults: local %+v, aws %+v, want both %+v", local, aws, want)
	}
	for name, value := range sharedBad {
		_, lerr := devstack.ParseConfig(settings.Vars{name: value}.Lookup)
		_, aerr := awsstack.ParseEnv(settings.Vars{name: value}.Lookup)
		if lerr == nil || aerr == nil || lerr.Error() != aerr.Error() {
			t.Errorf("%s=%q: local says %v, aws says %v; want the same error", name, value, lerr, aerr)
		}
	}
}

// A document read with From goes through the very readers and checks of
// the variables it stands for: its values are checked, what it declares
// is what the environment's other variables are checked against, its
// errors name the document, and the environment's value of a variable
// it gives is not read.
func TestFrom(t *testing.T) {
	const source = "the secret arn:aws:secretsmanager:us-east-1:123456789012:secret:cfg"
	models := `{"models": [{"modelId": "wan-2.2-720p", "name": "Wan 2.2", "capabilities": ["text-to-video"],` +
		` "resolutions": ["720p"], "pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 40}}]}`
	routes := `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000"}],` +
		` "models": {"wan-2.2-720p": ["wan"]}}`
	env := settings.Vars{settings.ProviderModels: "wan-2.2-720p=Wan-AI/Wan2.2-T2V-A14B-Diffusers", settings.Routes: `{"routes": "not read"}`}

	// Without the document the mapping names no model of the catalog.
	r := settings.NewReader(env.Lookup)
	r.ProviderConfig()
	if r.Err() == nil {
		t.Fatal("the environment alone: no error, want GEN_PROVIDER_MODELS and GEN_ROUTES refused")
	}

	r = settings.NewReader(env.Lookup)
	r.From(source, settings.Vars{settings.Routes: routes, settings.DeclaredModels: models})
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatalf("with the document: %v", err)
	}
	if p.Routes != routes || p.Declared != models {
		t.Errorf("Provider = routes %q, models %q; want the document's", p.Routes, p.Declared)
	}
	if _, ok := p.Catalog().Lookup("wan-2.2-720p"); !ok || len(p.ModelRoutes()["wan-2.2-720p"]) != 1 {
		t.Errorf("the declared model is not in the catalog or has no route: %v", p.ModelRoutes()["wan-2.2-720p"])
	}

	r = settings.NewReader(settings.Vars{}.Lookup)
	r.From(source, settings.Vars{settings.Routes: `{"routes": [{"name": "x", "kind": "teleport"}]}`})
	r.ProviderConfig()
	err := r.Err()
	if err == nil || !strings.Contains(err.Error(), settings.Routes+" ("+source+")=") || !strings.Contains(err.Error(), "kind") {
		t.Errorf("a bad route in the document: %v, want an error naming %s and the document", err, settings.Routes)
	}
}
