// Package logtest captures what a service under test logs. The server's
// goroutines write concurrently while the test reads, so the sink locks.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer for slog handlers (or a process's output) that
// is safe to write from many goroutines and to read at any time.
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	waiters []waiter
}

// waiter is a Seen call still waiting for its text.
type waiter struct {
	text string
	seen chan struct{}
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if bytes.Contains(b.buf.Bytes(), []byte(w.text)) {
			close(w.seen)
		} else {
			kept = append(kept, w)
		}
	}
	b.waiters = kept
	return n, err
}

// Seen returns a channel closed once what was written contains text: a
// test waits on it for the line a server prints when it is listening.
func (b *Buffer) Seen(text string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := waiter{text: text, seen: make(chan struct{})}
	if bytes.Contains(b.buf.Bytes(), []byte(text)) {
		close(w.seen)
	} else {
		b.waiters = append(b.waiters, w)
	}
	return w.seen
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
