package apikey

import (
	"strings"
	"testing"
)

func TestNewIsWellFormed(t *testing.T) {
	a, b := New(), New()
	if a == b {
		t.Fatal("New returned the same key twice")
	}
	if !WellFormed(a) {
		t.Errorf("WellFormed(%q) = false for a new key", a)
	}
}

func TestWellFormed(t *testing.T) {
	good := Prefix + strings.Repeat("aZ9", 13) + "x"
	tests := []struct {
		key  string
		want bool
	}{
		{good, true},
		{good[:len(good)-1], false},
		{good + "x", false},
		{"GEN_" + good[4:], false},
		{Prefix + strings.Repeat("a", 39) + "-", false},
		{Prefix + strings.Repeat("a", 38) + "é", false}, // 40 bytes, not base62
		{"", false},
		{"Bearer " + good, false},
	}
	for _, tt := range tests {
		if got := WellFormed(tt.key); got != tt.want {
			t.Errorf("WellFormed(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestHash(t *testing.T) {
	k := New()
	h := Hash(k)
	if len(h) != 64 || strings.Contains(h, k[4:]) {
		t.Errorf("Hash(%q) = %q, want a 64-char hex digest", k, h)
	}
	if Hash(k) != h {
		t.Error("Hash is not deterministic")
	}
}
