package httpguard

import (
	"math/rand/v2"
	"net/url"
	"testing"
)

// TestPlainPathIsParsed: every target plainPath lets through unparsed is
// one url.ParseRequestURI takes, over targets built from every byte.
func TestPlainPathIsParsed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	plain := 0
	for range 200000 {
		b := []byte{'/'}
		for range r.IntN(24) {
			if r.IntN(4) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				const chars = "az09-._~/?=&,+%#:@ "
				b = append(b, chars[r.IntN(len(chars))])
			}
		}
		target := string(b)
		if !plainPath(target) {
			continue
		}
		plain++
		if _, err := url.ParseRequestURI(target); err != nil {
			t.Fatalf("plainPath(%q) = true, but ParseRequestURI: %v", target, err)
		}
	}
	if plain == 0 {
		t.Fatal("no target was plain")
	}
	for _, target := range []string{"/api/gen/status/gen_1_abc", "/api/gen/history?limit=20&cursor=AbC-_x"} {
		if !plainPath(target) {
			t.Errorf("plainPath(%q) = false, want true", target)
		}
	}
}
