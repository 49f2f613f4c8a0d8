package cursor_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/cursor"
)

func TestSealOpen(t *testing.T) {
	ctx := context.Background()
	old, cur := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	s := &cursor.Sealer{Keys: cursor.Static{cur, old}}
	pos := []byte("1700000000000.gen_abc")
	c, err := s.Seal(ctx, "history", "acct-a", pos)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c, "gen_abc") || strings.Contains(c, "1700000000000") {
		t.Errorf("cursor %s shows its position", c)
	}
	if got, err := s.Open(ctx, "history", "acct-a", c); err != nil || !bytes.Equal(got, pos) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// Sealed under the previous key: still opens.
	byOld, _ := (&cursor.Sealer{Keys: cursor.Static{old}}).Seal(ctx, "history", "acct-a", pos)
	if got, err := s.Open(ctx, "history", "acct-a", byOld); err != nil || !bytes.Equal(got, pos) {
		t.Errorf("Open of a cursor of the previous key = %q, %v", got, err)
	}
	raw := []byte(c)
	bad := []struct{ name, list, account, cursor string }{
		{"another account", "history", "acct-b", c},
		{"another list", "ledger", "acct-a", c},
		{"a trailing NUL", "history", "acct-a", c + "\x00"},
		{"a character more", "history", "acct-a", c + "A"},
		{"a character less", "history", "acct-a", c[:len(c)-1]},
		{"padding", "history", "acct-a", c + "="},
		{"empty", "history", "acct-a", ""},
		{"made up", "history", "acct-a", "MTcwMDAwMDAwMDAwMC5nZW5fYWJj"},
		{"too long", "history", "acct-a", strings.Repeat("A", cursor.MaxLen+1)},
		{"another server's", "history", "acct-a", mustSeal(t, cursor.Random(), pos)},
	}
	for i := range raw {
		// Every character changed to another: no cursor opens.
		flipped := append([]byte(nil), raw...)
		if flipped[i] == 'A' {
			flipped[i] = 'B'
		} else {
			flipped[i] = 'A'
		}
		bad = append(bad, struct{ name, list, account, cursor string }{"changed at " + string(rune('0'+i%10)), "history", "acct-a", string(flipped)})
	}
	for _, b := range bad {
		if got, err := s.Open(ctx, b.list, b.account, b.cursor); !errors.Is(err, cursor.ErrInvalid) {
			t.Errorf("%s: Open = %q, %v; want ErrInvalid", b.name, got, err)
		}
	}
}

func mustSeal(t *testing.T, k cursor.Keys, pos []byte) string {
	c, err := (&cursor.Sealer{Keys: k}).Seal(context.Background(), "history", "acct-a", pos)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
