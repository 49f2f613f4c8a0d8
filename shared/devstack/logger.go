package devstack

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logFlushAfter is the longest a request log line waits in the buffer.
const logFlushAfter = 100 * time.Millisecond

// NewLogger is the local service's logger: slog's text lines on w, at
// level. Lines are buffered and written at most logFlushAfter after
// they were logged, a warning or an error at once: one write per
// request line was a tenth of a status poll's CPU under load. close
// writes what is left; call it before the process exits.
func NewLogger(w io.Writer, level slog.Leveler) (logger *slog.Logger, close func() error) {
	bw := &batchWriter{w: bufio.NewWriterSize(w, 32<<10)}
	h := slog.NewTextHandler(bw, &slog.HandlerOptions{Level: level})
	return slog.New(urgentFlush{Handler: h, w: bw}), bw.Flush
}

// batchWriter buffers what is written to it, and flushes it a moment
// later from a timer that only runs while something waits.
type batchWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	pending bool // a flush is scheduled
}

func (b *batchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.w.Write(p)
	if !b.pending && b.w.Buffered() > 0 {
		b.pending = true
		time.AfterFunc(logFlushAfter, func() { b.Flush() })
	}
	return n, err
}

// Flush writes what is buffered.
func (b *batchWriter) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	return b.w.Flush()
}

// urgentFlush flushes after each record of level Warn or above, so that
// what went wrong is on the terminal before anything else happens.
type urgentFlush struct {
	slog.Handler
	w *batchWriter
}

func (h urgentFlush) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h urgentFlush) WithAttrs(attrs []slog.Attr) slog.Handler {
	return urgentFlush{Handler: h.Handler.WithAttrs(attrs), w: h.w}
}

func (h urgentFlush) WithGroup(name string) slog.Handler {
	return urgentFlush{Handler: h.Handler.WithGroup(name), w: h.w}
}
