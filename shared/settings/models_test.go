package settings_test

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/settings"
)

// wan is a declared model routed to a self-hosted host.
const wan = `{"modelId": "wan-2.2-720p", "name": "Wan 2.2 (720p)", "description": "Open model on our GPU.",
	"capabilities": ["text-to-video"], "resolutions": ["720p"],
	"pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 30}}`

func TestDeclaredModels(t *testing.T) {
	tests := []struct {
		name string
		vars settings.Vars
		// ids and def are the catalog's, for a valid value.
		ids []string
		def string
		// errs is text the error must hold; none for a valid value.
		errs []string
	}{
		{"unset: the contract's three", settings.Vars{}, []string{"gen-3.1-generate-001", "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001"},
			"gen-3.1-fast-generate-001", nil},
		{"one added, routed by name, the default", settings.Vars{settings.DeclaredModels: `{"models": [` + wan + `], "defaultModel": "wan-2.2-720p"}`,
			settings.Routes: `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000"}],
				"models": {"wan-2.2-720p": ["wan"]}}`,
			settings.ProviderModels: "wan-2.2-720p=Wan-AI/Wan2.2-T2V-A14B-Diffusers"},
			[]string{"gen-3.1-generate-001", "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001", "wan-2.2-720p"}, "wan-2.2-720p", nil},
		{"one of the contract's replaced in its place", settings.Vars{settings.DeclaredModels: `{"models": [{"modelId": "gen-3.1-generate-001",
			"name": "Quality", "capabilities": ["text-to-video", "audio-generation"], "resolutions": ["1080p"],
			"pricing": {"creditsPerVideo": 900, "creditsPerVideoNoAudio": 450}}]}`},
			[]string{"gen-3.1-generate-001", "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001"}, "gen-3.1-fast-generate-001", nil},
		{"an Omni route offers our Omni model", settings.Vars{settings.Generator: "omni-vertex", settings.VertexProject: "p"},
			[]string{"gen-3.1-generate-001", "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001", "gen-omni-flash-001"},
			"gen-3.1-fast-generate-001", nil},
		{"the Omni id declared, routed like any model", settings.Vars{settings.DeclaredModels: `{"models": [{"modelId": "gen-omni-flash-001",
			"name": "Omni", "capabilities": ["text-to-video"], "resolutions": ["720p"],
			"pricing": {"creditsPerVideo": 90, "creditsPerVideoNoAudio": 90}}]}`},
			[]string{"gen-3.1-generate-001", "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001", "gen-omni-flash-001"},
			"gen-3.1-fast-generate-001", nil},
		{"a route to an undeclared model", settings.Vars{settings.Routes: `{"routes": [], "models": {"wan-2.2-720p": ["builtin"]}}`},
			nil, "", []string{`"wan-2.2-720p" is not one of ours`}},
		{"not JSON", settings.Vars{settings.DeclaredModels: `models=wan`}, nil, "", []string{settings.DeclaredModels, "want JSON"}},
		{"an unknown member, named", settings.Vars{settings.DeclaredModels: `{"models": [{"modelId": "a", "price": 3}]}`},
			nil, "", []string{settings.DeclaredModels, "price"}},
		{"a member given twice", settings.Vars{settings.DeclaredModels: `{"models": [], "models": []}`}, nil, "", []string{"models"}},
		{"no models", settings.Vars{settings.DeclaredModels: `{"models": []}`}, nil, "", []string{"models: want 1 to 32 models"}},
		{"every field wrong", settings.Vars{settings.DeclaredModels: `{"models": [{"modelId": "Wan 2", "name": " ", "description": "a\u0007",
			"capabilities": ["audio-generation", "dance", "audio-generation"], "resolutions": ["4k"],
			"pricing": {"creditsPerVideo": 0, "creditsPerVideoNoAudio": -1},
			"provider": {"durations": [5], "aspectRatios": ["1:1"], "audio": "loud", "usdPerSecond": 0}}],
			"defaultModel": "nope"}`},
			nil, "", []string{"models[0].modelId: want lower-case", "models[0].name: want 1 to 80", "models[0].description:",
				"models[0].capabilities[1]: want text-to-video", "models[0].capabilities[2]: listed twice",
				"models[0].capabilities: want at least one of", "models[0].resolutions: want one or more of 1080p, 720p",
				"models[0].pricing.creditsPerVideo: want", "models[0].pricing.creditsPerVideoNoAudio: want",
				"models[0].provider.durations", "models[0].provider.aspectRatios", "models[0].provider.audio", "models[0].provider.usdPerSecond"}},
		{"declared twice", settings.Vars{settings.DeclaredModels: `{"models": [` + wan + `,` + wan + `]}`},
			nil, "", []string{"models[1].modelId: declared twice"}},
		{"a default that is no model", settings.Vars{settings.DeclaredModels: `{"models": [` + wan + `], "defaultModel": "wan"}`},
			nil, "", []string{"defaultModel: not one of the models"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := settings.NewReader(tt.vars.Lookup)
			p := r.ProviderConfig()
			err := r.Err()
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				c := p.Catalog()
				if got := strings.Join(c.IDs(), " "); got != strings.Join(tt.ids, " ") {
					t.Errorf("ids = %s, want %s", got, strings.Join(tt.ids, " "))
				}
				if c.Default() != tt.def {
					t.Errorf("default = %s, want %s", c.Default(), tt.def)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if p.Declared != "" || p.Catalog().Default() != "gen-3.1-fast-generate-001" {
				t.Error("a refused GEN_MODELS still declares models")
			}
		})
	}
}
