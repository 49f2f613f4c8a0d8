package devstack

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a terminal the logger's timer and the test both touch.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLoggerBatchesLines: a request line reaches the terminal soon, not
// at once; a warning is there when Warn returns, with the lines before
// it; close writes the rest.
func TestLoggerBatchesLines(t *testing.T) {
	var term lockedBuffer
	log, closeLog := NewLogger(&term, slog.LevelInfo)

	log.Info("request", "path", "/a")
	log.Debug("below the level")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(term.String(), "path=/a") {
		if time.Now().After(deadline) {
			t.Fatalf("an info line was never written: %q", term.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	log.Info("request", "path", "/b")
	log.With("task", "t1").Warn("no poster")
	got := term.String()
	if !strings.Contains(got, "path=/b") || !strings.Contains(got, "task=t1") {
		t.Errorf("after a warning the terminal holds %q; want the warning and the line before it", got)
	}

	log.Info("request", "path", "/c")
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	if got := term.String(); !strings.Contains(got, "path=/c") || strings.Contains(got, "below the level") {
		t.Errorf("after close the terminal holds %q; want /c and no debug line", got)
	}
}
