package catalog

import "testing"

func TestPrice(t *testing.T) {
	tests := []struct {
		model string
		audio bool
		want  int
	}{
		{"gen-3.1-fast-generate-001", true, 190},
		{"gen-3.1-fast-generate-001", false, 120},
		{"gen-3.1-generate-001", true, 500},
		{"gen-3.1-generate-001", false, 250},
		{"gen-3.1-lite-generate-001", true, 65},
		{"gen-3.1-lite-generate-001", false, 35},
	}
	for _, tt := range tests {
		m, ok := Lookup(tt.model)
		if !ok {
			t.Fatalf("Lookup(%q) found nothing", tt.model)
		}
		if got := m.Price(tt.audio); got != tt.want {
			t.Errorf("Price(%q, %v) = %d, want %d", tt.model, tt.audio, got, tt.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		model, capability string
		want              bool
	}{
		{"gen-3.1-generate-001", FirstLastFrame, true},
		{"gen-3.1-fast-generate-001", FirstLastFrame, true},
		{"gen-3.1-lite-generate-001", FirstLastFrame, false},
		{"gen-3.1-lite-generate-001", ImageToVideo, true},
	}
	for _, tt := range tests {
		m, _ := Lookup(tt.model)
		if got := m.Supports(tt.capability); got != tt.want {
			t.Errorf("Supports(%q, %q) = %v, want %v", tt.model, tt.capability, got, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	if _, ok := Lookup(DefaultModel); !ok {
		t.Fatalf("DefaultModel %q is not in the catalog", DefaultModel)
	}
	lite, _ := Lookup("gen-3.1-lite-generate-001")
	if lite.DefaultResolution() != "720p" || lite.SupportsResolution("1080p") {
		t.Errorf("lite resolutions = %v, want only 720p", lite.Resolutions)
	}
	all := All()
	all[0].Capabilities[0] = "changed"
	if m, _ := Lookup(all[0].ID); m.Capabilities[0] == "changed" {
		t.Error("All() shares its slices with the catalog")
	}
}

// TestPriceAt: 4K has its own price on the Quality model; every other
// resolution, and every resolution of a model without one, costs the
// model's price.
func TestPriceAt(t *testing.T) {
	tests := []struct {
		model, res string
		audio      bool
		want       int
	}{
		{"gen-3.1-generate-001", Resolution4K, true, 750},
		{"gen-3.1-generate-001", Resolution4K, false, 500},
		{"gen-3.1-generate-001", "1080p", true, 500},
		{"gen-3.1-generate-001", "720p", false, 250},
		{"gen-3.1-fast-generate-001", "1080p", true, 190},
		{"gen-3.1-lite-generate-001", "720p", false, 35},
	}
	for _, tt := range tests {
		m, _ := Lookup(tt.model)
		if got := m.PriceAt(tt.res, tt.audio); got != tt.want {
			t.Errorf("PriceAt(%q, %q, %v) = %d, want %d", tt.model, tt.res, tt.audio, got, tt.want)
		}
	}
	all := All()
	all[0].ResolutionCredits[Resolution4K] = Credits{1, 1}
	if m, _ := Lookup(all[0].ID); m.PriceAt(Resolution4K, true) == 1 {
		t.Error("All() shares its resolution prices with the catalog")
	}
}
