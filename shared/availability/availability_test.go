package availability_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/availability"
	"github.com/genvideo/gen/shared/store"
)

const (
	fast = "gen-3.1-fast-generate-001"
	lite = "gen-3.1-lite-generate-001"
)

// routes: fast goes to vertex then gemini, lite to gemini alone.
var routes = availability.Routes{
	fast: {{Route: "vertex", ProviderModel: "veo-3.1-fast-generate-001"}, {Route: "gemini", ProviderModel: "veo-3.1-fast-generate-preview"}},
	lite: {{Route: "gemini", ProviderModel: "veo-3.1-lite-generate-preview"}},
}

func check(route string, models map[string]string, missing ...string) store.RouteCheck {
	return store.RouteCheck{Route: route, CheckedAt: time.Unix(0, 0), Models: models, Missing: missing}
}

var (
	vertexAsked = map[string]string{fast: "veo-3.1-fast-generate-001"}
	geminiAsked = map[string]string{fast: "veo-3.1-fast-generate-preview", lite: "veo-3.1-lite-generate-preview"}
)

func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name   string
		checks []store.RouteCheck
		want   []string
	}{
		{"never checked: every model sells", nil, nil},
		{"every route serves everything", []store.RouteCheck{check("vertex", vertexAsked), check("gemini", geminiAsked)}, nil},
		{"one of two routes lacks it: still sold",
			[]store.RouteCheck{check("vertex", vertexAsked, "veo-3.1-fast-generate-001"), check("gemini", geminiAsked)}, nil},
		{"the only route lacks it", []store.RouteCheck{check("gemini", geminiAsked, "veo-3.1-lite-generate-preview")}, []string{lite}},
		{"every route lacks it",
			[]store.RouteCheck{check("vertex", vertexAsked, "veo-3.1-fast-generate-001"), check("gemini", geminiAsked, "veo-3.1-fast-generate-preview")},
			[]string{fast}},
		{"one route lacks it, the other never checked: still sold",
			[]store.RouteCheck{check("gemini", geminiAsked, "veo-3.1-fast-generate-preview", "veo-3.1-lite-generate-preview")}, []string{lite}},
		{"a check of another mapping (remapped since) says nothing",
			[]store.RouteCheck{check("gemini", map[string]string{lite: "veo-2.0-generate-001"}, "veo-2.0-generate-001")}, nil},
		{"a check of a route no model uses any more says nothing",
			[]store.RouteCheck{check("old", map[string]string{lite: "veo-3.1-lite-generate-preview"}, "veo-3.1-lite-generate-preview")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(availability.Unavailable(routes, tt.checks)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Unavailable = %v, want %v", got, tt.want)
			}
		})
	}
}

// fakeStore is a store.RouteChecks in memory that counts reads and can
// fail them.
type fakeStore struct {
	checks map[string]store.RouteCheck
	reads  int
	fail   error
}

func (f *fakeStore) RouteChecks(_ context.Context, names []string) ([]store.RouteCheck, error) {
	f.reads++
	if f.fail != nil {
		return nil, f.fail
	}
	var out []store.RouteCheck
	for _, n := range names {
		if c, ok := f.checks[n]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeStore) PutRouteCheck(_ context.Context, c store.RouteCheck) error {
	if f.fail != nil {
		return f.fail
	}
	f.checks[c.Route] = c
	return nil
}

// TestReaderCaches: a reader reads once per TTL, sees a change after
// it, and keeps what it read when the store cannot be read.
func TestReaderCaches(t *testing.T) {
	st := &fakeStore{checks: map[string]store.RouteCheck{"gemini": check("gemini", geminiAsked, "veo-3.1-lite-generate-preview")}}
	now := time.Unix(1000, 0)
	r := availability.NewReader(availability.ReaderConfig{Store: st, Routes: routes, Now: func() time.Time { return now },
		Logger: slog.New(slog.DiscardHandler)})
	ctx := t.Context()
	if got := r.Unavailable(ctx); !got[lite] || len(got) != 1 {
		t.Fatalf("Unavailable = %v, want lite only", got)
	}
	st.checks["gemini"] = check("gemini", geminiAsked)
	now = now.Add(availability.ReaderTTL - time.Second)
	if got := r.Unavailable(ctx); !got[lite] || st.reads != 1 {
		t.Errorf("within the TTL: Unavailable = %v after %d reads, want lite still, from 1 read", got, st.reads)
	}
	now = now.Add(time.Second)
	if got := r.Unavailable(ctx); len(got) != 0 || st.reads != 2 {
		t.Errorf("after the TTL: Unavailable = %v after %d reads, want none, from 2 reads", got, st.reads)
	}
	st.checks["gemini"] = check("gemini", geminiAsked, "veo-3.1-lite-generate-preview")
	st.fail = errors.New("throttled")
	now = now.Add(availability.ReaderTTL)
	if got := r.Unavailable(ctx); len(got) != 0 {
		t.Errorf("store unreadable: Unavailable = %v, want what was read before (none)", got)
	}
	st.fail = nil
	if got := r.Unavailable(ctx); !got[lite] {
		t.Errorf("store readable again: Unavailable = %v, want lite (a failed read is not cached)", got)
	}
}
