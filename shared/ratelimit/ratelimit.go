// Package ratelimit holds the service's rate-limit policy: the budgets of
// each key tier and the fixed windows they are counted in. The counting
// itself is done by the store (store.Take, and CreateTask's StartGuard),
// atomically; this package only says which counters to count.
//
// Two budgets apply to every key (infra/docs/contract.md explains the two
// figure sets of the specification, "Set A" and "Set B"):
//
//   - the request budget (the spec's figure set B): every authenticated
//     request takes one unit of a per-minute and of a per-UTC-day window;
//   - the generation budget (figure set A): every start takes one unit of a
//     per-minute starts window, and at most MaxInFlight generations of the
//     account may be pending or processing at once.
//
// Pro's generation budget is five times Standard's, like its request budget
// (300/60 requests per minute, 10,000/1,000 per day).
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// Key tiers.
const (
	Standard   = "standard"
	Pro        = "pro"
	Enterprise = "enterprise"
)

// Tiers lists every tier, smallest first.
var Tiers = []string{Standard, Pro, Enterprise}

// StandardLimits are the budgets of a Standard key.
var StandardLimits = store.KeyLimits{
	RequestsPerMinute: 60,
	RequestsPerDay:    1000,
	StartsPerMinute:   10,
	MaxInFlight:       5,
}

// ProLimits are the budgets of a Pro key: five times Standard's.
var ProLimits = store.KeyLimits{
	RequestsPerMinute: 300,
	RequestsPerDay:    10000,
	StartsPerMinute:   50,
	MaxInFlight:       25,
}

// ForTier returns the limits of a key of the given tier. Only an
// Enterprise key has custom limits: each of its figures that is zero
// defaults to Pro's. An empty tier is Standard, the tier a key gets when
// none is named.
func ForTier(tier string, custom store.KeyLimits) (store.KeyLimits, error) {
	switch tier {
	case Standard, "":
		return StandardLimits, nil
	case Pro:
		return ProLimits, nil
	case Enterprise:
		l := custom
		fill(&l.RequestsPerMinute, ProLimits.RequestsPerMinute)
		fill(&l.RequestsPerDay, ProLimits.RequestsPerDay)
		fill(&l.StartsPerMinute, ProLimits.StartsPerMinute)
		fill(&l.MaxInFlight, ProLimits.MaxInFlight)
		if l.RequestsPerMinute < 0 || l.RequestsPerDay < 0 || l.StartsPerMinute < 0 || l.MaxInFlight < 0 {
			return store.KeyLimits{}, fmt.Errorf("enterprise limits %+v: a limit cannot be negative", custom)
		}
		return l, nil
	}
	return store.KeyLimits{}, fmt.Errorf("unknown key tier %q; tiers are %s", tier, strings.Join(Tiers, ", "))
}

// ForKey returns the limits of k: its tier's, or its own for Enterprise.
func ForKey(k store.Key) (store.KeyLimits, error) {
	l, err := ForTier(k.Tier, k.Limits)
	if err != nil {
		return store.KeyLimits{}, fmt.Errorf("limits of key %s: %w", k.ID, err)
	}
	return l, nil
}

func fill(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// Kind says which window a counter counts. Every counter made here
// carries it, and the store hands it back in a *domain.LimitError, so that
// the API can say which limit was reached.
type Kind = domain.WindowKind

// The three windows.
const (
	Minute Kind = "m" // requests per minute
	Day    Kind = "d" // requests per UTC day
	Starts Kind = "s" // generation starts per minute
	// Streams counts a key's open event streams (StreamSlots): not a
	// window of time but leases, each held while its stream runs.
	Streams Kind = "e"
)

// StreamSlots are the event-stream slots of key keyID, at most limit
// held at once, for a lease until expires (store.Store's OpenStream).
func StreamSlots(keyID string, limit int, expires time.Time) domain.Window {
	return domain.Window{Key: "es:" + keyID, Kind: Streams, Limit: limit, ExpiresAt: expires}
}

// MinuteWindow returns the fixed one-minute window holding at.
func MinuteWindow(at time.Time) (start, end time.Time) {
	start = at.UTC().Truncate(time.Minute)
	return start, start.Add(time.Minute)
}

// DayWindow returns the UTC day holding at.
func DayWindow(at time.Time) (start, end time.Time) {
	y, m, d := at.UTC().Date()
	start = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// counter names a window of one key: "rl:<kind>:<keyID>:<window start, unix
// seconds>". A new window is a new counter, so counts never need resetting;
// the store drops a counter at its ExpiresAt, the window's end. The format
// is that of counters already stored: it must not change.
func counter(kind Kind, keyID string, limit int, start, end time.Time) domain.Window {
	return domain.Window{
		Key:       counterName(kind, keyID, start.Unix()),
		Kind:      kind,
		Limit:     limit,
		ExpiresAt: end,
	}
}

// names keeps the counter names of the windows in use: every request
// names its key's two windows, the same strings for a minute, and making
// them anew was a fiftieth of a poll's CPU.
var names struct {
	mu sync.Mutex
	m  map[nameOf]string
}

type nameOf struct {
	kind  Kind
	keyID string
	start int64
}

// namesMax bounds the names kept; past it they are made anew.
const namesMax = 4096

func counterName(kind Kind, keyID string, start int64) string {
	k := nameOf{kind, keyID, start}
	names.mu.Lock()
	defer names.mu.Unlock()
	if n, ok := names.m[k]; ok {
		return n
	}
	n := "rl:" + string(kind) + ":" + keyID + ":" + strconv.FormatInt(start, 10)
	if names.m == nil || len(names.m) >= namesMax {
		names.m = make(map[nameOf]string)
	}
	names.m[k] = n
	return n
}

// RequestCounters returns the per-minute and the per-day counter of the
// key, in that order, for one store.Take call per request.
func RequestCounters(keyID string, l store.KeyLimits, at time.Time) []domain.Window {
	ms, me := MinuteWindow(at)
	ds, de := DayWindow(at)
	return []domain.Window{
		counter(Minute, keyID, l.RequestsPerMinute, ms, me),
		counter(Day, keyID, l.RequestsPerDay, ds, de),
	}
}

// StartLimits returns the guard CreateTask checks in the transaction that
// charges for a start: the key's starts-per-minute window and the
// account's in-flight limit. A start rejected for any reason (credits
// included) takes nothing from either.
func StartLimits(keyID string, l store.KeyLimits, at time.Time) domain.StartGuard {
	s, e := MinuteWindow(at)
	c := counter(Starts, keyID, l.StartsPerMinute, s, e)
	return domain.StartGuard{MaxInFlight: l.MaxInFlight, Starts: &c}
}

// RetryAfter is the whole seconds from now until reset, rounded up and at
// least 1, as the Retry-After headers and retry_after want it.
func RetryAfter(reset, now time.Time) int {
	d := reset.Sub(now)
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		return 1
	}
	return secs
}
