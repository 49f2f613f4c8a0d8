package domain

import (
	"testing"
	"time"
)

func TestSpendWindows(t *testing.T) {
	tests := []struct {
		name               string
		at                 time.Time
		perDay, perMon     int64
		day, month         string
		dayEnd, monthEnd   time.Time
		dayLimit, monLimit int
	}{
		{"mid-month, both capped", time.Date(2026, 11, 26, 23, 59, 59, 0, time.FixedZone("CET", 3600)), 500, 5000,
			"spend:day:key-1:2026-11-26", "spend:month:key-1:2026-11",
			time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 500, 5000},
		{"the last day of the year, uncapped", time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC), 0, 0,
			"spend:day:key-1:2026-12-31", "spend:month:key-1:2026-12",
			time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), Uncapped, Uncapped},
	}
	for _, tt := range tests {
		w := SpendWindows("key-1", tt.perDay, tt.perMon, tt.at)
		if len(w) != 2 || w[0].Key != tt.day || w[1].Key != tt.month || w[0].Kind != CapDay || w[1].Kind != CapMonth ||
			!w[0].ExpiresAt.Equal(tt.dayEnd) || !w[1].ExpiresAt.Equal(tt.monthEnd) ||
			w[0].Limit != tt.dayLimit || w[1].Limit != tt.monLimit {
			t.Errorf("%s: SpendWindows = %+v", tt.name, w)
		}
	}
}
