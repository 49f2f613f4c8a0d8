package task

import (
	"testing"
	"time"
)

func TestNewIDIsValid(t *testing.T) {
	now := time.UnixMilli(1_763_000_000_123)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewID(now)
		if !ValidID(id) {
			t.Fatalf("ValidID(%q) = false for a NewID", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"gen_1763000000123_abcdefghij", true},
		{"gen_1763000000123_abcdefghi", true},
		{"gen_1763000000123_abcdefgh", false},
		{"gen_1763000000123_ABCDEFGHIJ", false},
		{"vid_1763000000123_abcdefghij", false},
		{"gen_01763000000123_abcdefghij", false},
		{"gen_-1763000000123_abcdefghij", false},
		{"gen_12_abcdefghij", false},
		{"gen_1763000000123_abcdefghij_x", false},
		{"", false},
		{"../../etc/passwd", false},
		{"gen_1763000000123_abc/efghij", false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestTerminal(t *testing.T) {
	for _, s := range Statuses {
		want := s == Completed || s == Failed
		if got := s.Terminal(); got != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, got, want)
		}
	}
}
