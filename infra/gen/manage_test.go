package main

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/store"
)

// gen cancel, gen delete and gen credits, as a person uses them: cancel a
// slow generation, see the refund in credits, delete the task.
func TestCancelCreditsDelete(t *testing.T) {
	k := stack.Key(t, 1000, store.KeyLimits{})
	start := gen(t, k.APIKey, "generate", "[slow:60] never mind", "--model", "lite", "--duration", "4", "--no-wait")
	if start.code != exitOK {
		t.Fatalf("start: %v", start)
	}
	id := strings.TrimSpace(start.stdout)
	if r := gen(t, k.APIKey, "delete", id); r.code != exitError || !strings.Contains(r.stderr, "TASK_NOT_FINISHED") {
		t.Errorf("delete in flight: %v", r)
	}
	r := gen(t, k.APIKey, "cancel", id)
	if r.code != exitOK || !strings.Contains(r.stdout, "failed") || !strings.Contains(r.stdout, "CANCELLED") {
		t.Errorf("cancel: %v", r)
	}
	r = gen(t, k.APIKey, "credits", "--limit", "2")
	if r.code != exitOK || !strings.Contains(r.stdout, "Balance:") || !strings.Contains(r.stdout, "1000 credits") ||
		!strings.Contains(r.stdout, "refund") || !strings.Contains(r.stdout, "More: gen credits --cursor ") {
		t.Errorf("credits: %v", r)
	}
	if r := gen(t, k.APIKey, "delete", id); r.code != exitOK || !strings.Contains(r.stdout, "Deleted "+id) {
		t.Errorf("delete: %v", r)
	}
	if r := gen(t, k.APIKey, "cancel", id); r.code != exitError || !strings.Contains(r.stderr, "no such task") {
		t.Errorf("cancel after delete: %v", r)
	}
	if r := gen(t, k.APIKey, "credits", "--json"); r.code != exitOK || !strings.Contains(r.stdout, `"balance": 1000`) {
		t.Errorf("credits --json: %v", r)
	}
}
