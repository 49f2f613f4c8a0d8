package lifecycle

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
)

// inStatus is a task of acct-a charged cost, refunded refunded, in status
// st.
func inStatus(st task.Status, cost, refunded int) task.Task {
	return task.Task{ID: "gen_1_abc", AccountID: "acct-a", Model: "gen-3.1-fast-generate-001",
		CreditsCost: cost, CreditsRefunded: refunded, Status: st, CreatedAt: t0}
}

func TestMarkProcessing(t *testing.T) {
	at := t0.Add(time.Second)
	started := inStatus(task.Processing, 10, 0)
	started.StartedAt = at
	for _, st := range task.Statuses {
		tk := inStatus(st, 10, 0)
		tk.StartedAt = time.Time{}
		got := MarkProcessing(tk, at)
		want := Transition{Task: tk}
		if st == task.Pending {
			want = Transition{Task: started, Changed: true}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("MarkProcessing(%s) = %+v, want %+v", st, got, want)
		}
	}
}

func TestComplete(t *testing.T) {
	at := t0.Add(time.Minute)
	videos := []task.Video{{Key: "videos/gen_1_abc/0.mp4", MimeType: "video/mp4", Size: 3}}
	completed := func(cost, refunded int, vs []task.Video) task.Task {
		tk := inStatus(task.Completed, cost, refunded)
		tk.Videos, tk.CompletedAt = vs, at
		return tk
	}
	entry := func(amount int64) *domain.LedgerEntry {
		return &domain.LedgerEntry{AccountID: "acct-a", TaskID: "gen_1_abc", Kind: domain.EntryRefund,
			Amount: amount, At: at, Note: "partial result"}
	}
	tests := []struct {
		name    string
		t       task.Task
		c       domain.Completion
		want    Transition
		wantErr error // nil: none; errAny: some error other than a sentinel
	}{
		{"pending, no refund", inStatus(task.Pending, 100, 0), domain.Completion{Videos: videos},
			Transition{Task: completed(100, 0, videos), Changed: true, InFlight: -1}, nil},
		{"processing, a partial refund", inStatus(task.Processing, 100, 0), domain.Completion{Videos: videos, Refund: 40},
			Transition{Task: completed(100, 40, videos), Changed: true, Refund: entry(40), InFlight: -1}, nil},
		{"a refund of all that is left", inStatus(task.Processing, 100, 30), domain.Completion{Videos: videos, Refund: 70},
			Transition{Task: completed(100, 100, videos), Changed: true, Refund: entry(70), InFlight: -1}, nil},
		{"a free task", inStatus(task.Processing, 0, 0), domain.Completion{Videos: videos},
			Transition{Task: completed(0, 0, videos), Changed: true, InFlight: -1}, nil},
		{"no videos are kept as none", inStatus(task.Processing, 10, 0), domain.Completion{Videos: []task.Video{}},
			Transition{Task: completed(10, 0, nil), Changed: true, InFlight: -1}, nil},
		{"a refund above what is left", inStatus(task.Processing, 100, 30), domain.Completion{Refund: 71},
			Transition{Task: inStatus(task.Processing, 100, 30)}, errAny},
		{"a negative refund", inStatus(task.Processing, 100, 0), domain.Completion{Refund: -1},
			Transition{Task: inStatus(task.Processing, 100, 0)}, errAny},
		{"completed stays as it is", inStatus(task.Completed, 100, 0), domain.Completion{Videos: videos, Refund: 10},
			Transition{Task: inStatus(task.Completed, 100, 0)}, nil},
		{"failed is terminal", inStatus(task.Failed, 100, 100), domain.Completion{Videos: videos},
			Transition{Task: inStatus(task.Failed, 100, 100)}, domain.ErrTerminal},
	}
	for _, tt := range tests {
		got, err := Complete(tt.t, tt.c, at)
		checkErr(t, "Complete: "+tt.name, err, tt.wantErr)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Complete: %s = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestFail(t *testing.T) {
	at := t0.Add(time.Minute)
	f := task.Failure{Code: task.FailTimeout, Message: "too slow"}
	failed := func(cost int) task.Task {
		tk := inStatus(task.Failed, cost, cost)
		tk.Failure, tk.CompletedAt = &f, at
		return tk
	}
	entry := func(amount int64) *domain.LedgerEntry {
		return &domain.LedgerEntry{AccountID: "acct-a", TaskID: "gen_1_abc", Kind: domain.EntryRefund,
			Amount: amount, At: at, Note: task.FailTimeout}
	}
	tests := []struct {
		name    string
		t       task.Task
		want    Transition
		wantErr error
	}{
		{"pending: all it was charged", inStatus(task.Pending, 100, 0),
			Transition{Task: failed(100), Changed: true, Refund: entry(100), InFlight: -1}, nil},
		{"processing: all it was charged", inStatus(task.Processing, 100, 0),
			Transition{Task: failed(100), Changed: true, Refund: entry(100), InFlight: -1}, nil},
		{"only what is left of the charge", inStatus(task.Processing, 100, 30),
			Transition{Task: failed(100), Changed: true, Refund: entry(70), InFlight: -1}, nil},
		{"nothing left, no entry", inStatus(task.Processing, 100, 100),
			Transition{Task: failed(100), Changed: true, InFlight: -1}, nil},
		{"a free task, no entry", inStatus(task.Pending, 0, 0),
			Transition{Task: failed(0), Changed: true, InFlight: -1}, nil},
		{"failed stays as it is: refunded once", inStatus(task.Failed, 100, 100),
			Transition{Task: inStatus(task.Failed, 100, 100)}, nil},
		{"completed is terminal", inStatus(task.Completed, 100, 20),
			Transition{Task: inStatus(task.Completed, 100, 20)}, domain.ErrTerminal},
	}
	for _, tt := range tests {
		got, err := Fail(tt.t, f, at)
		checkErr(t, "Fail: "+tt.name, err, tt.wantErr)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Fail: %s = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// errAny stands for an error that is none of the sentinels.
var errAny = errors.New("any error")

func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: error %v, want none", what, err)
	case want == errAny && (err == nil || errors.Is(err, domain.ErrTerminal)):
		t.Errorf("%s: error %v, want an error other than ErrTerminal", what, err)
	case want != nil && want != errAny && !errors.Is(err, want):
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

func TestPartialRefund(t *testing.T) {
	tk := func(model string, samples int, audio bool) task.Task {
		return task.Task{ID: "gen_1_abc", Model: model, Params: params.Parameters{SampleCount: samples, GenerateAudio: audio}}
	}
	const fast = "gen-3.1-fast-generate-001" // 190 a video with audio, 120 without
	tests := []struct {
		name     string
		t        task.Task
		produced int
		want     int
		wantErr  bool
	}{
		{"every sample", tk(fast, 4, true), 4, 0, false},
		{"one missing, with audio", tk(fast, 4, true), 3, 190, false},
		{"three missing, without audio", tk(fast, 4, false), 1, 360, false},
		{"all missing", tk(fast, 2, true), 0, 380, false},
		{"more videos than samples", tk(fast, 2, true), 3, 0, true},
		{"fewer than none", tk(fast, 2, true), -1, 0, true},
		{"an unknown model", tk("gen-9", 2, true), 1, 0, true},
	}
	for _, tt := range tests {
		got, err := PartialRefund(tt.t, tt.produced)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: PartialRefund = %d, %v; want %d, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDeadline(t *testing.T) {
	deadline := t0.Add(10 * time.Minute)
	with := task.Task{Deadline: deadline}
	tests := []struct {
		name      string
		t         task.Task
		at        time.Time
		grace     time.Duration
		past      bool // PastDeadline
		pastGrace bool // PastGrace with grace
	}{
		{"no deadline", task.Task{}, deadline.Add(time.Hour), time.Minute, false, false},
		{"before the deadline", with, deadline.Add(-time.Second), time.Minute, false, false},
		{"at the deadline", with, deadline, time.Minute, false, false},
		{"just past the deadline", with, deadline.Add(time.Nanosecond), time.Minute, true, false},
		{"at the end of the grace", with, deadline.Add(time.Minute), time.Minute, true, false},
		{"past the grace", with, deadline.Add(time.Minute + time.Nanosecond), time.Minute, true, true},
		{"no grace", with, deadline.Add(time.Nanosecond), 0, true, true},
	}
	for _, tt := range tests {
		if got := PastDeadline(tt.t, tt.at); got != tt.past {
			t.Errorf("%s: PastDeadline = %v, want %v", tt.name, got, tt.past)
		}
		if got := PastGrace(tt.t, tt.at, tt.grace); got != tt.pastGrace {
			t.Errorf("%s: PastGrace(%v) = %v, want %v", tt.name, tt.grace, got, tt.pastGrace)
		}
	}
}
