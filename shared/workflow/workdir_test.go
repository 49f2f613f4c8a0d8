package workflow

import (
	"testing"
)

func TestWorkDirTask(t *testing.T) {
	const id = "gen_1700000000000_abcdefghi"
	for _, tt := range []struct {
		name, id string
	}{
		{workDirPrefix + id + "-123456", id},
		{workDirPrefix + id + "-", id},
		{workDirPrefix + id, ""},
		{workDirPrefix + "not-an-id-1", ""},
		{"other-" + id + "-1", ""},
		{id, ""},
	} {
		got, ok := WorkDirTask(tt.name)
		if got != tt.id || ok != (tt.id != "") {
			t.Errorf("WorkDirTask(%q) = %q, %v; want %q", tt.name, got, ok, tt.id)
		}
	}
}
