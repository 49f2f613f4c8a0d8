package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/store"
)

// testRouteChecks: a route's check is stored whole and read back by the
// route's name, a later one replaces it, an earlier one (a checker
// that ran at once with another) does not, and a route never checked
// has none.
func testRouteChecks(t *testing.T, s Backend) {
	ctx := t.Context()
	if got, err := s.RouteChecks(ctx, []string{"gemini"}); err != nil || len(got) != 0 {
		t.Fatalf("RouteChecks of a store never written = %v, %v; want none", got, err)
	}
	first := store.RouteCheck{Route: "gemini", CheckedAt: at(0),
		Models:  map[string]string{"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-preview", "gen-3.1-generate-001": "veo-3.1-generate-preview"},
		Missing: []string{"veo-3.1-fast-generate-preview"}}
	other := store.RouteCheck{Route: "vertex-east", CheckedAt: at(time.Second),
		Models: map[string]string{"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-001"}}
	for _, c := range []store.RouteCheck{first, other} {
		if err := s.PutRouteCheck(ctx, c); err != nil {
			t.Fatalf("PutRouteCheck(%s): %v", c.Route, err)
		}
	}
	read := func(routes ...string) map[string]store.RouteCheck {
		t.Helper()
		got, err := s.RouteChecks(ctx, routes)
		if err != nil {
			t.Fatalf("RouteChecks(%v): %v", routes, err)
		}
		out := map[string]store.RouteCheck{}
		for _, c := range got {
			out[c.Route] = c
		}
		return out
	}
	same := func(got, want store.RouteCheck) bool {
		return got.Route == want.Route && sameTime(got.CheckedAt, want.CheckedAt) && reflect.DeepEqual(got.Models, want.Models) &&
			slices.Equal(got.Missing, want.Missing)
	}
	got := read("gemini", "vertex-east", "never-checked")
	if len(got) != 2 || !same(got["gemini"], first) || !same(got["vertex-east"], other) {
		t.Fatalf("RouteChecks = %+v, want the two written: %+v and %+v", got, first, other)
	}
	if c := read("gemini")["gemini"]; !c.Lacks("gen-3.1-fast-generate-001", "veo-3.1-fast-generate-preview") ||
		c.Lacks("gen-3.1-generate-001", "veo-3.1-generate-preview") || c.Lacks("gen-3.1-fast-generate-001", "veo-3.1-fast-generate-001") {
		t.Errorf("the stored check lacks the wrong models: %+v", c)
	}

	later := first
	later.CheckedAt, later.Missing = at(time.Hour), nil
	if err := s.PutRouteCheck(ctx, later); err != nil {
		t.Fatal(err)
	}
	earlier := first
	earlier.CheckedAt = at(time.Minute)
	if err := s.PutRouteCheck(ctx, earlier); err != nil {
		t.Fatalf("PutRouteCheck of a check older than the stored one = %v, want nil (it is dropped)", err)
	}
	if c := read("gemini")["gemini"]; !same(c, later) {
		t.Errorf("after a later check and then an earlier one, the route holds %+v, want the later %+v", c, later)
	}
	if got := read(); len(got) != 0 {
		t.Errorf("RouteChecks of no route = %v, want none", got)
	}
}
