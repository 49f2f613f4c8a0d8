package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// Allowance is what a spending cap of the caller's key still allows.
type Allowance struct {
	// Cap is domain.CapDay or domain.CapMonth.
	Cap domain.WindowKind
	// Limit is the cap in force, in credits; 0 when the key has none
	// (Remaining is then meaningless).
	Limit int64
	// Spent is what the key was charged in the window, less refunds.
	Spent     int64
	Remaining int64
	// Reset is the start of the next UTC day or month.
	Reset time.Time
}

// spendGuard is the Spend part of the start guard of key k at at.
func spendGuard(k store.Key, at time.Time) []domain.Window {
	return domain.SpendWindows(k.ID, k.Caps.Day(), k.Caps.Month(), at)
}

// Allowances reads what the caller's key spent today and this month and
// what its caps still allow: the day's first, then the month's.
func (s *Service) Allowances(ctx context.Context, c Caller) ([]Allowance, error) {
	windows := spendGuard(c.Key, c.Now)
	spent := make([]int64, len(windows))
	for i, w := range windows {
		n, err := s.cfg.Store.Count(ctx, w, c.Now)
		if err != nil {
			return nil, fmt.Errorf("spend of key %s: %w", c.Key.ID, err)
		}
		spent[i] = int64(n)
	}
	return allowances(windows, spent), nil
}

// allowances is what windows, holding spent, still allow.
func allowances(windows []domain.Window, spent []int64) []Allowance {
	out := make([]Allowance, 0, len(windows))
	for i, w := range windows {
		a := Allowance{Cap: w.Kind, Spent: spent[i], Reset: w.ExpiresAt}
		if w.Limit != domain.Uncapped {
			a.Limit = int64(w.Limit)
			a.Remaining = max(a.Limit-a.Spent, 0)
		}
		out = append(out, a)
	}
	return out
}

// CappedAllowances is Allowances when the caller's key has a cap in
// force, for the headers of a start, and nothing (without reading) when
// it has none; a failure to read is logged and leaves them out, as they
// are only a hint.
func (s *Service) CappedAllowances(ctx context.Context, c Caller) []Allowance {
	if c.Key.Caps.Day() == 0 && c.Key.Caps.Month() == 0 {
		return nil
	}
	a, err := s.Allowances(ctx, c)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "cannot read the spend of a capped key",
			slog.String("key", c.Key.ID), slog.String("error", err.Error()))
		return nil
	}
	return a
}

// HolderCaps are the caps a key's holder asks for, in credits; nil
// leaves one as it is, 0 removes the holder's own (the operator's
// stays).
type HolderCaps struct {
	PerDay   *int64
	PerMonth *int64
}

// ErrNegativeCap: a cap below 0 was asked for.
var ErrNegativeCap = errors.New("a spending cap cannot be negative")

// SetHolderCaps lowers (or lifts again, never above the operator's) the
// caller's key's spending caps, and returns them as they are in force
// after. A cap above the operator's is allowed and has no effect: the
// lower of the two is in force (store.SpendCaps). The write names the
// holder's caps alone: the operator's are never written back from the
// caller's key as it was read when the request was authenticated.
func (s *Service) SetHolderCaps(ctx context.Context, c Caller, h HolderCaps) (store.SpendCaps, error) {
	u := store.CapsUpdate{HolderPerDay: h.PerDay, HolderPerMonth: h.PerMonth}
	if u.Negative() {
		return store.SpendCaps{}, ErrNegativeCap
	}
	caps, err := s.cfg.Store.SetKeyCaps(ctx, c.Key.ID, u)
	if err != nil {
		return store.SpendCaps{}, fmt.Errorf("set the caps of key %s: %w", c.Key.ID, err)
	}
	return caps, nil
}
