package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/ratelimit"
)

// A stream's lease lasts StreamLease and is renewed once less than
// StreamLease-StreamRenew is left, so a stream that crashed (its process
// killed, its Lambda timed out) frees its key's slot within StreamLease,
// while a live one writes once every StreamRenew or so.
const (
	StreamLease = time.Minute
	StreamRenew = 20 * time.Second
)

// Stream is the slot an open event stream holds among its key's
// MaxEventStreams. Renew it while the stream runs; Close it when it ends.
type Stream struct {
	svc     *Service
	key     string
	lease   string
	renewAt time.Time
}

// OpenStream takes one of the caller's key's event-stream slots. With
// every slot held it returns the store's *domain.LimitError, whose window
// is of kind ratelimit.Streams and expires when the earliest lease holding
// a slot lapses unless renewed.
func (s *Service) OpenStream(ctx context.Context, c Caller) (*Stream, error) {
	b := make([]byte, 12)
	rand.Read(b) // never fails (crypto/rand)
	now := s.cfg.Now()
	w := ratelimit.StreamSlots(c.Key.ID, s.cfg.MaxEventStreams, now.Add(StreamLease))
	st := &Stream{svc: s, key: w.Key, lease: hex.EncodeToString(b), renewAt: now.Add(StreamRenew)}
	if _, err := s.cfg.Store.OpenStream(ctx, w, st.lease, now); err != nil {
		return nil, fmt.Errorf("open an event stream of key %s: %w", c.Key.ID, err)
	}
	return st, nil
}

// Renew extends the stream's lease when it is due, and does nothing
// otherwise, so that a stream may call it at every turn. An error (the
// lease lapsed and its slot was taken, or the store failed) means the
// stream must end.
func (st *Stream) Renew(ctx context.Context) error {
	now := st.svc.cfg.Now()
	if now.Before(st.renewAt) {
		return nil
	}
	if err := st.svc.cfg.Store.RenewStream(ctx, st.key, st.lease, now.Add(StreamLease)); err != nil {
		return fmt.Errorf("renew event stream lease: %w", err)
	}
	st.renewAt = now.Add(StreamRenew)
	return nil
}

// Close frees the stream's slot. It runs after the request's context may
// have ended (the client left), so it has its own short deadline; if it
// fails, the lease lapses within StreamLease.
func (st *Stream) Close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := st.svc.cfg.Store.CloseStream(ctx, st.key, st.lease); err != nil {
		st.svc.log.LogAttrs(ctx, slog.LevelWarn, "cannot free an event stream's slot; its lease will lapse",
			slog.String("error", err.Error()))
	}
}
