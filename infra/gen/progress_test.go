package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
)

// TestLinesShowProgress: a poll line carries the provider's progress
// while the task processes, and nothing where there is none.
func TestLinesShowProgress(t *testing.T) {
	for _, tt := range []struct {
		task client.Task
		want string
	}{
		{client.Task{TaskID: "gen_1", Status: client.StatusProcessing, Progress: 40}, `^gen_1: processing 40%, \d+s elapsed \(estimated 30-60 seconds\)\n$`},
		{client.Task{TaskID: "gen_1", Status: client.StatusProcessing}, `^gen_1: processing, \d+s elapsed`},
		{client.Task{TaskID: "gen_1", Status: client.StatusPending, Progress: 40}, `^gen_1: pending, \d+s elapsed`},
	} {
		var out bytes.Buffer
		l := &lines{w: &out, estimate: "30-60 seconds", start: time.Now()}
		l.update(&tt.task)
		if !regexp.MustCompile(tt.want).MatchString(out.String()) {
			t.Errorf("update(%+v) wrote %q, want a match for %s", tt.task, out.String(), tt.want)
		}
	}
}
