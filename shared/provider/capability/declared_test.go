package capability_test

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
)

// A declared model (GEN_MODELS) whose provider model no table knows is
// served as its declaration says, and held to the declared cost; one
// without a declaration is still an unknown model. Not parallel: the
// catalog is the process's.
func TestDeclaredProviderModel(t *testing.T) {
	ltx := catalog.Model{ID: "ltx-2", Name: "LTX 2", Capabilities: []string{catalog.TextToVideo, catalog.ImageToVideo},
		Resolutions: []string{"720p"}, CreditsPerVideo: 50, CreditsPerVideoNoAudio: 50,
		Provider: &catalog.ProviderModel{Durations: []int{4, 8}, AspectRatios: []string{"16:9"}, Audio: "never", USDPerSecond: 0.05}}
	bare := catalog.Model{ID: "bare", Name: "Bare", Capabilities: []string{catalog.TextToVideo}, Resolutions: []string{"720p"},
		CreditsPerVideo: 50, CreditsPerVideoNoAudio: 50}
	t.Cleanup(catalog.Install(catalog.Builtin().With([]catalog.Model{ltx, bare}, "")))
	unknown := func(ours string) (capability.Priced, bool) { return capability.Priced{ID: "ltx-2-host"}, false }

	got, err := capability.Served([]string{"ltx-2"}, "the host", unknown, 0.015)
	if err != nil {
		t.Fatal(err)
	}
	l := got["ltx-2"]
	if strings.Join(l.Modes, " ") != "text-to-video image-to-video" || len(l.Durations) != 2 || l.Audio != capability.AudioNever ||
		l.MaxSampleCount != 1 || strings.Join(l.Resolutions[8], " ") != "720p" || l.Seed {
		t.Errorf("declared limits = %+v", l)
	}
	// 8 s at $0.05 is $0.40; 50 credits at $0.0075 are $0.375.
	if _, err := capability.Served([]string{"ltx-2"}, "the host", unknown, 0.0075); err == nil || !strings.Contains(err.Error(), "ltx-2 on ltx-2-host: 8 s") {
		t.Errorf("a declared model sold below its declared cost: %v", err)
	}
	if _, err := capability.Served([]string{"bare"}, "the host", unknown, 0.015); err == nil || !strings.Contains(err.Error(), "not a model of the host") {
		t.Errorf("an undeclared provider model was served: %v", err)
	}
}
