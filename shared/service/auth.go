package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
)

// Caller is who made a request, and when: one clock reading per request.
type Caller struct {
	Key    store.Key
	Limits store.KeyLimits
	Now    time.Time
	// Requests is the caller's request windows as this request left
	// them, once counted (CountRequest): what Credits reports.
	Requests Quota
}

// Authenticate finds the caller of a request that sent key at now. An
// empty key is ErrKeyMissing; a value not shaped like a key is refused
// without a store look-up; an unknown or revoked key is ErrKeyInvalid
// like a malformed one.
func (s *Service) Authenticate(ctx context.Context, key string, now time.Time) (Caller, error) {
	if key == "" {
		return Caller{}, ErrKeyMissing
	}
	if !apikey.WellFormed(key) {
		return Caller{}, ErrKeyInvalid
	}
	k, err := s.cfg.Store.KeyByHash(ctx, apikey.Hash(key))
	if errors.Is(err, domain.ErrNotFound) {
		return Caller{}, ErrKeyInvalid
	}
	if err != nil {
		return Caller{}, fmt.Errorf("look up key: %w", err)
	}
	if k.Revoked() {
		return Caller{}, ErrKeyInvalid
	}
	limits, err := ratelimit.ForKey(k)
	if err != nil {
		return Caller{}, err
	}
	return Caller{Key: k, Limits: limits, Now: now}, nil
}

// CheckKey reports whether key is a live key, as Authenticate finds it,
// without counting a request: false for a missing, malformed, unknown or
// revoked key, an error when the store cannot tell. The remote MCP
// endpoint (shared/mcpserver) checks its caller with it before reading a
// message; the tools' requests are then authenticated and counted one by
// one.
func (s *Service) CheckKey(ctx context.Context, key string) (bool, error) {
	_, err := s.Authenticate(ctx, key, s.cfg.Now())
	switch {
	case errors.Is(err, ErrKeyMissing), errors.Is(err, ErrKeyInvalid):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// Quota is the caller's request windows after a request: the minute's,
// which the X-RateLimit-* headers of every authenticated response
// describe, and the day's.
type Quota struct {
	Minute, Day LimitWindow
}

// LimitWindow is one rate-limit window as a request left it: its limit,
// what is left of it, and when it resets (the contract's
// wire.LimitWindow).
type LimitWindow struct {
	Limit     int
	Remaining int
	Reset     time.Time
}

// CountRequest counts the request in the key's minute and day windows, in
// one Take of Config.Limiter: both or neither. It returns both
// windows as the request left them. When a window is exhausted nothing is
// taken, the error is the *domain.LimitError naming it, and Remaining is
// 0: no request is accepted before that window ends.
func (s *Service) CountRequest(ctx context.Context, c Caller) (Quota, error) {
	counters := ratelimit.RequestCounters(c.Key.ID, c.Limits, c.Now)
	minute, day := counters[0], counters[1]
	q := Quota{Minute: LimitWindow{Limit: minute.Limit, Reset: minute.ExpiresAt}, Day: LimitWindow{Limit: day.Limit, Reset: day.ExpiresAt}}
	used, err := s.cfg.Limiter.Take(ctx, counters, c.Now)
	var limit *domain.LimitError
	switch {
	case errors.As(err, &limit):
		return q, err
	case err != nil:
		return q, fmt.Errorf("take request counters: %w", err)
	case len(used) != len(counters):
		return q, fmt.Errorf("take request counters: store returned %d counts for %d counters", len(used), len(counters))
	}
	q.Minute.Remaining = max(minute.Limit-used[0], 0)
	q.Day.Remaining = max(day.Limit-used[1], 0)
	return q, nil
}
