package cursor

import "testing"

// The associated data is part of every cursor issued: its bytes must not
// change, or the cursors a client holds stop opening.
func TestBoundBytes(t *testing.T) {
	tests := []struct{ list, account, want string }{
		{"history", "acct-a", "7:history|acct-a"},
		{"", "", "0:|"},
		{"webhook:wh_1|x", "acct_b", "14:webhook:wh_1|x|acct_b"},
	}
	for _, tt := range tests {
		if got := string(bound(tt.list, tt.account)); got != tt.want {
			t.Errorf("bound(%q, %q) = %q, want %q", tt.list, tt.account, got, tt.want)
		}
	}
}
