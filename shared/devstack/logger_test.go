package devstack

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/testing/logtest"
)

// TestLoggerBatchesLines: a request line reaches the terminal soon, not
// at once; a warning is there when Warn returns, with the lines before
// it; close writes the rest.
func TestLoggerBatchesLines(t *testing.T) {
	term := &logtest.Buffer{}
	log, closeLog := NewLogger(term, slog.LevelInfo)

	log.Info("request", "path", "/a")
	log.Debug("below the level")
	select {
	case <-term.Seen("path=/a"):
	case <-time.After(10 * time.Second):
		t.Fatalf("an info line was never written: %q", term.String())
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
