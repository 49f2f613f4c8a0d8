package ratelimit

import (
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

func TestForTier(t *testing.T) {
	tests := []struct {
		tier    string
		custom  store.KeyLimits
		want    store.KeyLimits
		wantErr bool
	}{
		{Standard, store.KeyLimits{}, lim(60, 1000, 10, 5), false},
		{"", store.KeyLimits{}, lim(60, 1000, 10, 5), false},
		// A Standard or Pro key's own figures are ignored: the tier decides.
		{Standard, lim(1, 1, 1, 1), lim(60, 1000, 10, 5), false},
		{Pro, store.KeyLimits{}, lim(300, 10000, 50, 25), false},
		{Enterprise, lim(1000, 0, 7, 0), lim(1000, 10000, 7, 25), false},
		{Enterprise, store.KeyLimits{}, ProLimits, false},
		{Enterprise, lim(-1, 0, 0, 0), store.KeyLimits{}, true},
		{"gold", store.KeyLimits{}, store.KeyLimits{}, true},
	}
	for _, tt := range tests {
		got, err := ForTier(tt.tier, tt.custom)
		if (err != nil) != tt.wantErr {
			t.Errorf("ForTier(%q, %+v) error = %v, want error %v", tt.tier, tt.custom, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ForTier(%q, %+v) = %+v, want %+v", tt.tier, tt.custom, got, tt.want)
		}
	}
}

// lim builds Limits in the order requests/min, requests/day, starts/min, in flight.
func lim(rpm, rpd, spm, inFlight int) store.KeyLimits {
	return store.KeyLimits{RequestsPerMinute: rpm, RequestsPerDay: rpd, StartsPerMinute: spm, MaxInFlight: inFlight}
}

func TestProIsFiveTimesStandard(t *testing.T) {
	s, p := StandardLimits, ProLimits
	if p.RequestsPerMinute != 5*s.RequestsPerMinute || p.StartsPerMinute != 5*s.StartsPerMinute || p.MaxInFlight != 5*s.MaxInFlight {
		t.Errorf("Pro %+v is not five times Standard %+v", p, s)
	}
}

func TestRequestCounters(t *testing.T) {
	at := time.Date(2025, 3, 9, 23, 59, 42, 500e6, time.FixedZone("X", 3600))
	cs := RequestCounters("key_abc", StandardLimits, at)
	if len(cs) != 2 {
		t.Fatalf("RequestCounters returned %d counters, want 2", len(cs))
	}
	min, day := cs[0], cs[1]
	if got, want := min.ExpiresAt, time.Date(2025, 3, 9, 23, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("minute window ends %v, want %v", got, want)
	}
	if got, want := day.ExpiresAt, time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("day window ends %v, want %v", got, want)
	}
	if min.Limit != 60 || day.Limit != 1000 {
		t.Errorf("limits = %d, %d, want 60, 1000", min.Limit, day.Limit)
	}
	if min.Kind != Minute {
		t.Errorf("minute counter's Kind = %q, want %q", min.Kind, Minute)
	}
	if day.Kind != Day {
		t.Errorf("day counter's Kind = %q, want %q", day.Kind, Day)
	}

	// The same window gives the same key; the next window another one; and
	// another key never shares a counter.
	if again := RequestCounters("key_abc", StandardLimits, at.Add(10*time.Second)); again[0].Key != min.Key {
		t.Errorf("same minute: key %q, want %q", again[0].Key, min.Key)
	}
	if next := RequestCounters("key_abc", StandardLimits, at.Add(20*time.Second)); next[0].Key == min.Key || next[1].Key != day.Key {
		t.Errorf("next minute: counters %q, %q; want a new minute counter in the same day counter %q", next[0].Key, next[1].Key, day.Key)
	}
	// at is 22:59:42 UTC (23:59:42 at UTC+1): the UTC day ends an hour later.
	if next := RequestCounters("key_abc", StandardLimits, at.Add(time.Hour+20*time.Second)); next[1].Key == day.Key {
		t.Errorf("next UTC day reuses the day counter %q", next[1].Key)
	}
	if other := RequestCounters("key_abd", StandardLimits, at); other[0].Key == min.Key || other[1].Key == day.Key {
		t.Errorf("another key shares counters %q, %q", other[0].Key, other[1].Key)
	}
}

func TestStartLimits(t *testing.T) {
	at := time.Date(2025, 3, 9, 12, 0, 59, 0, time.UTC)
	g := StartLimits("key_abc", ProLimits, at)
	if g.MaxInFlight != 25 {
		t.Errorf("MaxInFlight = %d, want 25", g.MaxInFlight)
	}
	if g.Starts == nil || g.Starts.Limit != 50 || !g.Starts.ExpiresAt.Equal(at.Add(time.Second)) {
		t.Fatalf("Starts = %+v, want limit 50 expiring %v", g.Starts, at.Add(time.Second))
	}
	if g.Starts.Kind != Starts {
		t.Errorf("starts counter's Kind = %q, want %q", g.Starts.Kind, Starts)
	}
	if g.Starts.Key == RequestCounters("key_abc", ProLimits, at)[0].Key {
		t.Error("the starts counter shares the request counter's key")
	}
}

// TestCounterKeys pins the keys of the counters: they name windows
// already stored, so a new format would restart every open window.
func TestCounterKeys(t *testing.T) {
	at := time.Date(2025, 3, 9, 12, 0, 59, 0, time.UTC)
	rc := RequestCounters("key_abc", StandardLimits, at)
	tests := []struct {
		name string
		c    domain.Window
		want string
	}{
		{"minute", rc[0], "rl:m:key_abc:1741521600"},
		{"day", rc[1], "rl:d:key_abc:1741478400"},
		{"starts", *StartLimits("key_abc", StandardLimits, at).Starts, "rl:s:key_abc:1741521600"},
	}
	for _, tt := range tests {
		if tt.c.Key != tt.want {
			t.Errorf("%s counter key = %q, want %q", tt.name, tt.c.Key, tt.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		reset time.Time
		want  int
	}{
		{now.Add(30 * time.Second), 30},
		{now.Add(29*time.Second + time.Millisecond), 30},
		{now.Add(time.Millisecond), 1},
		{now, 1},
		{now.Add(-time.Hour), 1},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.reset, now); got != tt.want {
			t.Errorf("RetryAfter(now+%v) = %d, want %d", tt.reset.Sub(now), got, tt.want)
		}
	}
}
