package cursor_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
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

// rotating is a Keys whose list changes, as the signer secret's does on AWS.
type rotating struct{ keys [][]byte }

func (r *rotating) CursorKeys(context.Context) ([][]byte, error) { return r.keys, nil }

// One Sealer across a rotation: it seals with the new first key, opens
// with every key listed, and no longer with one that left the list,
// whatever ciphers it derived before.
func TestSealerFollowsRotation(t *testing.T) {
	ctx := context.Background()
	a, b := bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32)
	keys := &rotating{keys: [][]byte{a}}
	s := &cursor.Sealer{Keys: keys}
	pos := []byte("1700000000000.gen_abc")
	byA, err := s.Seal(ctx, "history", "acct-a", pos)
	if err != nil {
		t.Fatal(err)
	}
	keys.keys = [][]byte{b, a}
	byB, err := s.Seal(ctx, "history", "acct-a", pos)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]string{"sealed by a": byA, "sealed by b": byB} {
		if got, err := s.Open(ctx, "history", "acct-a", c); err != nil || !bytes.Equal(got, pos) {
			t.Errorf("%s, keys b and a: Open = %q, %v", name, got, err)
		}
	}
	if _, err := (&cursor.Sealer{Keys: cursor.Static{a}}).Open(ctx, "history", "acct-a", byB); !errors.Is(err, cursor.ErrInvalid) {
		t.Errorf("sealed after the rotation, opened with the old key alone: %v, want ErrInvalid (b sealed it)", err)
	}
	keys.keys = [][]byte{b}
	if _, err := s.Open(ctx, "history", "acct-a", byA); !errors.Is(err, cursor.ErrInvalid) {
		t.Errorf("sealed by a, a retired: Open = %v, want ErrInvalid", err)
	}
	if got, err := s.Open(ctx, "history", "acct-a", byB); err != nil || !bytes.Equal(got, pos) {
		t.Errorf("sealed by b, keys b: Open = %q, %v", got, err)
	}
}

// A position sealed again for the same list and account is the cursor
// sealed before; any other list, account or position is a cursor of its
// own, opening as what it was sealed for.
func TestSealerReusesCursors(t *testing.T) {
	ctx := context.Background()
	s := &cursor.Sealer{Keys: cursor.Static{bytes.Repeat([]byte{6}, 32)}}
	seal := func(list, account, pos string) string {
		t.Helper()
		c, err := s.Seal(ctx, list, account, []byte(pos))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := seal("history", "acct-a", "p1")
	if again := seal("history", "acct-a", "p1"); again != first {
		t.Errorf("the same position sealed again: %s, then %s", first, again)
	}
	others := map[string]struct{ list, account, pos string }{
		seal("ledger", "acct-a", "p1"):  {"ledger", "acct-a", "p1"},
		seal("history", "acct-b", "p1"): {"history", "acct-b", "p1"},
		seal("history", "acct-a", "p2"): {"history", "acct-a", "p2"},
	}
	for c, o := range others {
		if c == first {
			t.Errorf("%+v sealed as history p1 of acct-a was", o)
		}
		if got, err := s.Open(ctx, o.list, o.account, c); err != nil || string(got) != o.pos {
			t.Errorf("%+v: Open = %q, %v", o, got, err)
		}
	}
}

// Cursors sealed before the ciphers were kept, by a Sealer of their own
// each time, open with a long-lived one: the key derivation and the
// bound data are the same.
func TestCursorsOfAFreshSealerOpen(t *testing.T) {
	ctx := context.Background()
	k := cursor.Static{bytes.Repeat([]byte{5}, 32)}
	long := &cursor.Sealer{Keys: k}
	for _, list := range []string{"history", "ledger", "webhook:wh_1/deliveries"} {
		pos := []byte("pos of " + list)
		c, err := (&cursor.Sealer{Keys: k}).Seal(ctx, list, "acct-a", pos)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := long.Open(ctx, list, "acct-a", c); err != nil || !bytes.Equal(got, pos) {
			t.Errorf("%s: Open = %q, %v", list, got, err)
		}
	}
}

// BenchmarkSeal seals a position sealed before (a page asked again) and
// positions never sealed (each page of a walk through a history).
func BenchmarkSeal(b *testing.B) {
	ctx := context.Background()
	s := &cursor.Sealer{Keys: cursor.Static{bytes.Repeat([]byte{1}, 32)}}
	pos := []byte("1700000000000.gen_1795847417077_e4s4eo6fxw")
	b.Run("again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Seal(ctx, "history", "acct_wdrc4kfwik0z", pos); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := s.Seal(ctx, "history", "acct_wdrc4kfwik0z", strconv.AppendInt(pos[:len(pos):len(pos)], int64(i), 10)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
