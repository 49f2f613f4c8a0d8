package wire_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/wire"
)

// A Time is written as the contract's timestamp whatever its zone and
// precision, and reads any RFC 3339 timestamp back.
func TestTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2030, 1, 2, 3, 4, 5, 678_900_000, time.UTC), `"2030-01-02T03:04:05.678Z"`},
		{time.Date(2030, 1, 2, 4, 4, 5, 0, paris), `"2030-01-02T03:04:05.000Z"`},
		{time.Time{}, `"0001-01-01T00:00:00.000Z"`},
	} {
		got, err := json.Marshal(wire.TimeOf(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(TimeOf(%v)) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		var back wire.Time
		if err := json.Unmarshal(got, &back); err != nil || back != wire.TimeOf(tc.in) {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back, err, wire.TimeOf(tc.in))
		}
	}
	var v wire.Time
	for _, in := range []string{`"2030-01-02T03:04:05Z"`, `"2030-01-02T04:04:05.000000001+01:00"`} {
		if err := json.Unmarshal([]byte(in), &v); err != nil || v.Year() != 2030 {
			t.Errorf("Unmarshal(%s) = %v, %v; want a time in 2030", in, v, err)
		}
	}
	for _, in := range []string{`1700000000`, `"2030-01-02"`, `"yesterday"`} {
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, v)
		}
	}
	// omitzero leaves a zero Time out.
	b, _ := json.Marshal(wire.LimitWindow{Limit: 5})
	if string(b) != `{"limit":5,"remaining":0}` {
		t.Errorf("a window without a reset = %s, want no reset member", b)
	}
}

// The pagination of a history page and of the ledger are members of
// their own in JSON, and the page's fields in Go.
func TestPaginationNests(t *testing.T) {
	p := wire.HistoryPage{Success: true, Items: []wire.HistoryItem{}, Pagination: wire.Pagination{Total: 3, Limit: 2, HasMore: true, NextCursor: "c"}}
	b, _ := json.Marshal(p)
	if want := `{"success":true,"videos":[],"pagination":{"total":3,"limit":2,"skip":0,"hasMore":true,"nextCursor":"c"}}`; string(b) != want {
		t.Errorf("history page = %s, want %s", b, want)
	}
	var cr wire.Credits
	if err := json.Unmarshal([]byte(`{"pagination":{"limit":20,"hasMore":true,"nextCursor":"n"}}`), &cr); err != nil || !cr.Pagination.HasMore || cr.Pagination.NextCursor != "n" || cr.Pagination.Limit != 20 {
		t.Errorf("credits pagination = %+v, %v; want limit 20, more, cursor n", cr.Pagination, err)
	}
}

func TestEstimatedWait(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi time.Duration
		ok     bool
	}{
		{"60-180 seconds", time.Minute, 3 * time.Minute, true},
		{" 5 - 5 seconds ", 5 * time.Second, 5 * time.Second, true},
		{"180-60 seconds", 0, 0, false},
		{"60 seconds", 0, 0, false},
		{"1-2 minutes", 0, 0, false},
	} {
		s := wire.Started{EstimatedWaitTime: tc.in}
		lo, hi, ok := s.EstimatedWait()
		if lo != tc.lo || hi != tc.hi || ok != tc.ok {
			t.Errorf("EstimatedWait(%q) = %v, %v, %v; want %v, %v, %v", tc.in, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}
