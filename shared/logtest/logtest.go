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
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
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
