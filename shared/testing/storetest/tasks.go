package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

func testCreateTask(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 100)
	created := at(time.Minute)
	tk := newTask("acct-a", taskID(created, "a1b2c3d4e5"), 30, created)
	charged, err := s.CreateTask(t.Context(), tk, domain.StartGuard{MaxInFlight: 5})
	bal := charged.Balance
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if bal != 70 {
		t.Errorf("CreateTask returned balance %d, want 70", bal)
	}
	wantHolding(t, s, "acct-a", 70, 1, "CreateTask")
	l := mustLedger(t, s, "acct-a")
	if len(l) != 2 {
		t.Fatalf("ledger after CreateTask has %d entries, want 2 (opening grant, charge): %+v", len(l), l)
	}
	if e := l[1]; e.Kind != domain.EntryCharge || e.TaskID != tk.ID || e.Amount != -30 || e.Balance != 70 ||
		e.AccountID != "acct-a" {
		t.Errorf("charge entry = %+v, want a charge of -30 for %s, balance 70", e, tk.ID)
	}
	want := tk
	want.Status = task.Pending
	checkTask(t, "Task after CreateTask", mustTask(t, s, tk.ID), want)

	// A task with no inputs and no deadline keeps them empty.
	created = at(2 * time.Minute)
	bare := newTask("acct-a", taskID(created, "f6g7h8i9j0"), 0, created)
	bare.Inputs, bare.Deadline, bare.Params.NegativePrompt = nil, time.Time{}, ""
	if ch, err := s.CreateTask(t.Context(), bare, domain.StartGuard{}); err != nil || ch.Balance != 70 {
		t.Fatalf("CreateTask(free task) = %d, %v; want 70, nil", ch.Balance, err)
	}
	want = bare
	want.Status = task.Pending
	checkTask(t, "Task after CreateTask", mustTask(t, s, bare.ID), want)

	_, err = s.Task(t.Context(), taskID(created, "zzzzzzzzzz"))
	wantErrIs(t, "Task(unknown)", err, domain.ErrNotFound)
	CheckInvariants(t, s, "acct-a")
}

func testCreateTaskUnknownAccount(t *testing.T, s store.Store) {
	tk := newTask("acct-nobody", taskID(at(0), "aaaaaaaaaa"), 10, at(0))
	_, err := s.CreateTask(t.Context(), tk, domain.StartGuard{})
	wantErrIs(t, "CreateTask for an unknown account", err, domain.ErrNotFound)
	_, err = s.Task(t.Context(), tk.ID)
	wantErrIs(t, "Task after CreateTask failed", err, domain.ErrNotFound)
}

func testCreateTaskInsufficientCredits(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 10)
	before := takeSnapshot(t, s, "acct-a")
	tk := newTask("acct-a", taskID(at(0), "aaaaaaaaaa"), 11, at(0))
	_, err := s.CreateTask(t.Context(), tk, domain.StartGuard{MaxInFlight: 5})
	var ice *domain.InsufficientCreditsError
	if !errors.As(err, &ice) {
		t.Fatalf("CreateTask(cost 11, balance 10): got %v, want *domain.InsufficientCreditsError", err)
	}
	if ice.Required != 11 || ice.Available != 10 {
		t.Errorf("InsufficientCreditsError = %+v, want Required 11, Available 10", *ice)
	}
	unchanged(t, s, "acct-a", before, "InsufficientCreditsError")
	_, err = s.Task(t.Context(), tk.ID)
	wantErrIs(t, "Task after InsufficientCreditsError", err, domain.ErrNotFound)

	// Exactly the balance is enough.
	tk = newTask("acct-a", taskID(at(time.Second), "bbbbbbbbbb"), 10, at(time.Second))
	if ch, err := s.CreateTask(t.Context(), tk, domain.StartGuard{}); err != nil || ch.Balance != 0 {
		t.Errorf("CreateTask(cost 10, balance 10) = %d, %v; want 0, nil", ch.Balance, err)
	}
	CheckInvariants(t, s, "acct-a")
}

func testCreateTaskInFlightLimit(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	guard := domain.StartGuard{MaxInFlight: 2}
	var made []task.Task
	for i := range 3 {
		c := at(time.Duration(i) * time.Second)
		made = append(made, newTask("acct-a", taskID(c, fmt.Sprintf("task%06d", i)), 10, c))
	}
	for _, tk := range made[:2] {
		mustStart(t, s, tk, guard)
	}
	before := takeSnapshot(t, s, "acct-a")
	_, err := s.CreateTask(ctx, made[2], guard)
	var ife *domain.InFlightLimitError
	if !errors.As(err, &ife) {
		t.Fatalf("CreateTask with 2 of 2 in flight: got %v, want *domain.InFlightLimitError", err)
	}
	if ife.Limit != 2 {
		t.Errorf("InFlightLimitError.Limit = %d, want 2", ife.Limit)
	}
	unchanged(t, s, "acct-a", before, "InFlightLimitError")
	_, err = s.Task(ctx, made[2].ID)
	wantErrIs(t, "Task after InFlightLimitError", err, domain.ErrNotFound)

	// A processing task still counts; a finished one frees its slot.
	mustMarkProcessing(t, s, made[0].ID, at(time.Minute))
	if _, err := s.CreateTask(ctx, made[2], guard); !errors.As(err, &ife) {
		t.Fatalf("CreateTask with a processing and a pending task in flight: got %v, want *domain.InFlightLimitError", err)
	}
	mustFail(t, s, made[0].ID, task.Failure{Code: task.FailGeneration, Message: "x"}, at(2*time.Minute))
	mustStart(t, s, made[2], guard)
	// MaxInFlight 0 means no limit.
	for i := range 3 {
		c := at(time.Hour + time.Duration(i)*time.Second)
		mustCreate(t, s, newTask("acct-a", taskID(c, fmt.Sprintf("free%06d", i)), 1, c))
	}
	if a := mustAccountState(t, s, "acct-a"); a.InFlight != 5 {
		t.Errorf("InFlight = %d, want 5", a.InFlight)
	}
	CheckInvariants(t, s, "acct-a")
}

func testCreateTaskStartsCounter(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	expires := t0.Add(time.Minute)
	starts := domain.Window{Key: "starts:key-1:29385120", Limit: 2, ExpiresAt: expires}
	n := 0
	next := func(cost int) task.Task {
		n++
		c := at(time.Duration(n) * time.Millisecond)
		return newTask("acct-a", taskID(c, fmt.Sprintf("start%05d", n)), cost, c)
	}
	for range 2 {
		mustStart(t, s, next(10), domain.StartGuard{Starts: &starts})
	}
	before := takeSnapshot(t, s, "acct-a")
	tk := next(10)
	_, err := s.CreateTask(ctx, tk, domain.StartGuard{Starts: &starts})
	var le *domain.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("CreateTask with the starts counter exhausted: got %v, want *domain.LimitError", err)
	}
	if le.Window.Key != starts.Key || le.Window.Limit != 2 {
		t.Errorf("LimitError names %s (limit %d), want %s (limit 2)", le.Window.Key, le.Window.Limit, starts.Key)
	}
	unchanged(t, s, "acct-a", before, "LimitError")
	_, err = s.Task(ctx, tk.ID)
	wantErrIs(t, "Task after LimitError", err, domain.ErrNotFound)

	// A start refused for another reason does not count; Take shows the
	// counter's count.
	poor := domain.Window{Key: "starts:key-2:29385120", Limit: 5, ExpiresAt: expires}
	_, err = s.CreateTask(ctx, next(1000), domain.StartGuard{Starts: &poor})
	var ice *domain.InsufficientCreditsError
	if !errors.As(err, &ice) {
		t.Fatalf("CreateTask(cost 1000): got %v, want *domain.InsufficientCreditsError", err)
	}
	busy := domain.Window{Key: "starts:key-3:29385120", Limit: 5, ExpiresAt: expires}
	_, err = s.CreateTask(ctx, next(10), domain.StartGuard{Starts: &busy, MaxInFlight: 2})
	var ife *domain.InFlightLimitError
	if !errors.As(err, &ife) {
		t.Fatalf("CreateTask with 2 of 2 in flight: got %v, want *domain.InFlightLimitError", err)
	}
	used, err := s.Take(ctx, []domain.Window{starts, poor, busy}, at(time.Second))
	var exhausted *domain.LimitError
	if !errors.As(err, &exhausted) || exhausted.Window.Key != starts.Key {
		t.Fatalf("Take(starts, poor, busy) = %v, %v; want the starts counter exhausted", used, err)
	}
	used, err = s.Take(ctx, []domain.Window{poor, busy}, at(time.Second))
	if err != nil || !slices.Equal(used, []int{1, 1}) {
		t.Errorf("Take after starts refused for credits and in-flight = %v, %v; want [1 1], nil (not counted)", used, err)
	}
	// A created task counts once.
	fresh := domain.Window{Key: "starts:key-4:29385120", Limit: 5, ExpiresAt: expires}
	mustStart(t, s, next(10), domain.StartGuard{Starts: &fresh})
	if used, err := s.Take(ctx, []domain.Window{fresh}, at(time.Second)); err != nil || !slices.Equal(used, []int{2}) {
		t.Errorf("Take after one start = %v, %v; want [2], nil", used, err)
	}
	CheckInvariants(t, s, "acct-a")
}

func testCreateTaskDuplicateID(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 30)
	before := takeSnapshot(t, s, "acct-a")
	again := tk
	again.Prompt = "something else"
	_, err := s.CreateTask(ctx, again, domain.StartGuard{})
	wantErrIs(t, "CreateTask with a used id", err, domain.ErrExists)
	unchanged(t, s, "acct-a", before, "a duplicate CreateTask")
	if got := mustTask(t, s, tk.ID); got.Prompt != tk.Prompt {
		t.Errorf("after a duplicate CreateTask the prompt is %q, want the first %q", got.Prompt, tk.Prompt)
	}
	wantHolding(t, s, "acct-a", 70, 1, "a duplicate CreateTask")
	CheckInvariants(t, s, "acct-a")
}

func testTasks(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 1000)
	mustAccount(t, s, "acct-b", 1000)
	// Created out of order; two share a millisecond, so the id decides.
	offsets := []struct {
		d      time.Duration
		suffix string
	}{
		{3 * time.Second, "cccccccccc"},
		{0, "aaaaaaaaaa"},
		{5 * time.Second, "ffffffffff"},
		{2 * time.Second, "bbbbbbbbbb"},
		{4 * time.Second, "dddddddddd"},
		{2 * time.Second, "zzzzzzzzzz"},
		{time.Second, "eeeeeeeeee"},
	}
	var a []task.Task
	for _, o := range offsets {
		tk := newTask("acct-a", taskID(at(o.d), o.suffix), 10, at(o.d))
		mustCreate(t, s, tk)
		a = append(a, tk)
	}
	for i := range 2 {
		c := at(10*time.Second + time.Duration(i)*time.Millisecond)
		mustCreate(t, s, newTask("acct-b", taskID(c, "bbbbbbbbb"+fmt.Sprint(i)), 10, c))
	}
	// Newest first; the order of ids within a millisecond is descending.
	newest := slices.Clone(a)
	sort.Slice(newest, func(i, j int) bool {
		ci, cj := newest[i].CreatedAt.UnixMilli(), newest[j].CreatedAt.UnixMilli()
		if ci != cj {
			return ci > cj
		}
		return newest[i].ID > newest[j].ID
	})
	order := ids(newest)

	// Move some along: order[1] processing, order[2] completed, order[4]
	// failed from pending, order[5] failed from processing.
	for _, id := range []string{order[1], order[2], order[5]} {
		mustMarkProcessing(t, s, id, at(time.Minute))
	}
	mustComplete(t, s, order[2], domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4", Size: 1}}}, at(2*time.Minute))
	for _, id := range []string{order[4], order[5]} {
		mustFail(t, s, id, task.Failure{Code: task.FailTimeout, Message: "too slow"}, at(3*time.Minute))
	}

	tests := []struct {
		account string
		q       store.TaskQuery
		want    []string
		total   int
	}{
		{"acct-a", store.TaskQuery{Limit: 20}, order, 7},
		{"acct-a", store.TaskQuery{Limit: 3}, order[:3], 7},
		{"acct-a", store.TaskQuery{Skip: 2, Limit: 3}, order[2:5], 7},
		{"acct-a", store.TaskQuery{Skip: 5, Limit: 3}, order[5:], 7},
		{"acct-a", store.TaskQuery{Skip: 7, Limit: 3}, nil, 7},
		{"acct-a", store.TaskQuery{Skip: 100, Limit: 100}, nil, 7},
		{"acct-a", store.TaskQuery{Status: task.Pending, Limit: 20}, []string{order[0], order[3], order[6]}, 3},
		{"acct-a", store.TaskQuery{Status: task.Pending, Skip: 1, Limit: 1}, []string{order[3]}, 3},
		{"acct-a", store.TaskQuery{Status: task.Processing, Limit: 20}, []string{order[1]}, 1},
		{"acct-a", store.TaskQuery{Status: task.Completed, Limit: 20}, []string{order[2]}, 1},
		{"acct-a", store.TaskQuery{Status: task.Failed, Limit: 20}, []string{order[4], order[5]}, 2},
		{"acct-a", store.TaskQuery{Status: task.Failed, Skip: 2, Limit: 20}, nil, 2},
		{"acct-b", store.TaskQuery{Limit: 20}, []string{taskID(at(10*time.Second+time.Millisecond), "bbbbbbbbb1"), taskID(at(10*time.Second), "bbbbbbbbb0")}, 2},
		{"acct-b", store.TaskQuery{Status: task.Failed, Limit: 20}, nil, 0},
		{"acct-nobody", store.TaskQuery{Limit: 20}, nil, 0},
	}
	for _, tt := range tests {
		got, total, err := s.Tasks(ctx, tt.account, tt.q)
		if err != nil {
			t.Errorf("Tasks(%s, %+v): %v", tt.account, tt.q, err)
			continue
		}
		if !slices.Equal(ids(got), tt.want) || total != tt.total {
			t.Errorf("Tasks(%s, %+v) = %v, total %d; want %v, total %d", tt.account, tt.q, ids(got), total, tt.want, tt.total)
		}
	}
	// The listed tasks are whole.
	got, _, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Status: task.Pending, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("Tasks(pending, limit 1) = %v, %v", ids(got), err)
	}
	want := newest[0]
	want.Status = task.Pending
	checkTask(t, "Tasks", got[0], want)

	unfinished, err := s.Unfinished(ctx)
	if err != nil {
		t.Fatalf("Unfinished: %v", err)
	}
	wantUnfinished := []string{order[0], order[1], order[3], order[6],
		taskID(at(10*time.Second), "bbbbbbbbb0"), taskID(at(10*time.Second+time.Millisecond), "bbbbbbbbb1")}
	if !slices.Equal(sorted(ids(unfinished)), sorted(wantUnfinished)) {
		t.Errorf("Unfinished = %v, want (in any order) %v", ids(unfinished), wantUnfinished)
	}
	for _, tk := range unfinished {
		if tk.Status.Terminal() || tk.AccountID == "" || tk.CreditsCost != 10 {
			t.Errorf("Unfinished listed %s: status %s, account %q, cost %d", tk.ID, tk.Status, tk.AccountID, tk.CreditsCost)
		}
	}
	CheckInvariants(t, s, "acct-a")
	CheckInvariants(t, s, "acct-b")
}

func testMarkProcessing(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 10)
	started := at(time.Second)
	got := mustMarkProcessing(t, s, tk.ID, started)
	want := tk
	want.Status, want.StartedAt = task.Processing, started
	checkTask(t, "MarkProcessing result", got, want)
	checkTask(t, "Task after MarkProcessing", mustTask(t, s, tk.ID), want)

	// Again: nothing changes, StartedAt stays the first.
	got = mustMarkProcessing(t, s, tk.ID, at(time.Minute))
	checkTask(t, "MarkProcessing again", got, want)
	checkTask(t, "Task after MarkProcessing again", mustTask(t, s, tk.ID), want)

	// On terminal tasks: nothing changes.
	videos := []task.Video{{Key: "videos/a/0.mp4", MimeType: "video/mp4", Size: 1 << 20}}
	mustComplete(t, s, tk.ID, domain.Completion{Videos: videos}, at(time.Hour))
	want.Status, want.Videos, want.CompletedAt = task.Completed, videos, at(time.Hour)
	got = mustMarkProcessing(t, s, tk.ID, at(2*time.Hour))
	checkTask(t, "MarkProcessing on a completed task", got, want)
	checkTask(t, "Task after MarkProcessing on a completed task", mustTask(t, s, tk.ID), want)

	failed := newTask("acct-a", taskID(at(time.Second), "bbbbbbbbbb"), 10, at(time.Second))
	mustCreate(t, s, failed)
	f := task.Failure{Code: task.FailContentPolicy, Message: "prompt refused"}
	mustFail(t, s, failed.ID, f, at(time.Minute))
	got = mustMarkProcessing(t, s, failed.ID, at(2*time.Minute))
	if got.Status != task.Failed || !got.StartedAt.IsZero() {
		t.Errorf("MarkProcessing on a failed task: status %s, StartedAt %v; want failed, zero", got.Status, got.StartedAt)
	}
	if got := mustTask(t, s, failed.ID); got.Status != task.Failed || !got.StartedAt.IsZero() {
		t.Errorf("Task after MarkProcessing on a failed task: status %s, StartedAt %v; want failed, zero", got.Status, got.StartedAt)
	}

	_, err := s.MarkProcessing(ctx, taskID(at(0), "zzzzzzzzzz"), at(0))
	wantErrIs(t, "MarkProcessing(unknown)", err, domain.ErrNotFound)
	CheckInvariants(t, s, "acct-a")
}

func testComplete(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 20)
	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	// One of two samples was produced: half the cost comes back.
	videos := []task.Video{{Key: "videos/" + tk.ID + "/0.mp4", MimeType: "video/mp4", Size: 7340032}}
	done := at(95 * time.Second)
	got := mustComplete(t, s, tk.ID, domain.Completion{Videos: videos, Refund: 10}, done)
	want := tk
	want.Status, want.StartedAt, want.CompletedAt = task.Completed, at(time.Second), done
	want.Videos, want.CreditsRefunded = videos, 10
	checkTask(t, "Complete result", got, want)
	checkTask(t, "Task after Complete", mustTask(t, s, tk.ID), want)
	wantHolding(t, s, "acct-a", 90, 0, "Complete with a refund of 10")
	l := mustLedger(t, s, "acct-a")
	if e := l[len(l)-1]; e.Kind != domain.EntryRefund || e.TaskID != tk.ID || e.Amount != 10 || e.Balance != 90 ||
		!sameTime(e.At, done) {
		t.Errorf("last ledger entry = %+v, want a refund of 10 for %s, balance 90, at %v", e, tk.ID, done)
	}

	// Completing again changes nothing, and refunds nothing more.
	before := takeSnapshot(t, s, "acct-a")
	other := []task.Video{{Key: "other", MimeType: "video/mp4", Size: 1}}
	got = mustComplete(t, s, tk.ID, domain.Completion{Videos: other, Refund: 10}, at(time.Hour))
	checkTask(t, "Complete again", got, want)
	checkTask(t, "Task after Complete again", mustTask(t, s, tk.ID), want)
	unchanged(t, s, "acct-a", before, "a second Complete")

	// Failing a completed task is refused.
	_, err := s.Fail(ctx, tk.ID, task.Failure{Code: task.FailInternal, Message: "late"}, at(time.Hour))
	wantErrIs(t, "Fail on a completed task", err, domain.ErrTerminal)
	checkTask(t, "Task after Fail on a completed task", mustTask(t, s, tk.ID), want)
	unchanged(t, s, "acct-a", before, "Fail on a completed task")

	// A pending task may complete directly; no refund, no refund entry.
	p := newTask("acct-a", taskID(at(time.Minute), "bbbbbbbbbb"), 10, at(time.Minute))
	mustCreate(t, s, p)
	mustComplete(t, s, p.ID, domain.Completion{Videos: videos}, at(2*time.Minute))
	if got := mustTask(t, s, p.ID); got.Status != task.Completed || got.CreditsRefunded != 0 {
		t.Errorf("Task after Complete on a pending task: status %s, refunded %d; want completed, 0", got.Status, got.CreditsRefunded)
	}
	wantHolding(t, s, "acct-a", 80, 0, "Complete with no refund")

	_, err = s.Complete(ctx, taskID(at(0), "zzzzzzzzzz"), domain.Completion{}, at(0))
	wantErrIs(t, "Complete(unknown)", err, domain.ErrNotFound)
	CheckInvariants(t, s, "acct-a")
}

func testCompleteRefundOutOfRange(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 20)
	want := mustTask(t, s, tk.ID)
	for _, refund := range []int{21, -1} {
		before := takeSnapshot(t, s, "acct-a")
		if _, err := s.Complete(ctx, tk.ID, domain.Completion{Refund: refund}, at(time.Minute)); err == nil {
			t.Errorf("Complete(refund %d of a cost of 20) succeeded, want an error", refund)
		}
		unchanged(t, s, "acct-a", before, fmt.Sprintf("Complete(refund %d)", refund))
		checkTask(t, fmt.Sprintf("Task after Complete(refund %d)", refund), mustTask(t, s, tk.ID), want)
	}
	// All of it may come back: nothing was produced that counts.
	mustComplete(t, s, tk.ID, domain.Completion{Refund: 20}, at(time.Minute))
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 100 {
		t.Errorf("after a full refund: %d credits, want 100", a.Credits)
	}
	CheckInvariants(t, s, "acct-a")
}

func testFail(t *testing.T, s store.Store) {
	ctx := t.Context()
	pending := oneTask(t, s, 20)
	processing := newTask("acct-a", taskID(at(time.Second), "bbbbbbbbbb"), 30, at(time.Second))
	mustCreate(t, s, processing)
	mustMarkProcessing(t, s, processing.ID, at(2*time.Second))
	processing.StartedAt = at(2 * time.Second)
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 50 || a.InFlight != 2 {
		t.Fatalf("after two starts: %d credits, %d in flight; want 50, 2", a.Credits, a.InFlight)
	}

	tests := []struct {
		tk      task.Task
		f       task.Failure
		credits int64
	}{
		{pending, task.Failure{Code: task.FailTimeout, Message: "no result within 10 minutes"}, 70},
		{processing, task.Failure{Code: task.FailGeneration, Message: "model error: \"quota\""}, 100},
	}
	for i, tt := range tests {
		done := at(time.Duration(i+1) * time.Minute)
		got := mustFail(t, s, tt.tk.ID, tt.f, done)
		want := tt.tk
		want.Status, want.CompletedAt, want.CreditsRefunded = task.Failed, done, tt.tk.CreditsCost
		f := tt.f
		want.Failure = &f
		checkTask(t, "Fail result", got, want)
		checkTask(t, "Task after Fail", mustTask(t, s, tt.tk.ID), want)
		if a := mustAccountState(t, s, "acct-a"); a.Credits != tt.credits || a.InFlight != 1-i {
			t.Errorf("after Fail(%s): %d credits, %d in flight; want %d, %d", tt.tk.ID, a.Credits, a.InFlight, tt.credits, 1-i)
		}
		l := mustLedger(t, s, "acct-a")
		if e := l[len(l)-1]; e.Kind != domain.EntryRefund || e.TaskID != tt.tk.ID || e.Amount != int64(tt.tk.CreditsCost) ||
			e.Balance != tt.credits || !sameTime(e.At, done) {
			t.Errorf("last ledger entry = %+v, want a refund of %d for %s, balance %d, at %v",
				e, tt.tk.CreditsCost, tt.tk.ID, tt.credits, done)
		}

		// Failing again changes nothing and refunds nothing more.
		before := takeSnapshot(t, s, "acct-a")
		got = mustFail(t, s, tt.tk.ID, task.Failure{Code: task.FailInternal, Message: "again"}, at(time.Hour))
		checkTask(t, "Fail again", got, want)
		unchanged(t, s, "acct-a", before, "a second Fail")
		// Completing a failed task is refused.
		_, err := s.Complete(ctx, tt.tk.ID, domain.Completion{Videos: []task.Video{{Key: "late"}}}, at(time.Hour))
		wantErrIs(t, "Complete on a failed task", err, domain.ErrTerminal)
		checkTask(t, "Task after Complete on a failed task", mustTask(t, s, tt.tk.ID), want)
		unchanged(t, s, "acct-a", before, "Complete on a failed task")
	}

	_, err := s.Fail(ctx, taskID(at(0), "zzzzzzzzzz"), task.Failure{Code: task.FailInternal}, at(0))
	wantErrIs(t, "Fail(unknown)", err, domain.ErrNotFound)
	CheckInvariants(t, s, "acct-a")
}

// testSetOperation: the Operation of a processing task moves from "" to
// a submit marker to the provider's handle, or back from the marker to
// "" (a refused submit), each only from the value the caller names; a
// handle is never replaced, and a pending task takes none.
func testSetOperation(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 10)

	got, err := s.SetOperation(ctx, tk.ID, "", "operations/pending")
	if err != nil {
		t.Fatalf("SetOperation on a pending task: %v", err)
	}
	if got.Operation != "" || mustTask(t, s, tk.ID).Operation != "" {
		t.Errorf("a pending task got the handle %q, want none", got.Operation)
	}

	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	marker := task.SubmittingMarker(at(time.Second))
	later := task.SubmittingMarker(at(2 * time.Second))
	handle := "projects/p/operations/1"
	steps := []struct {
		name, from, to, want string
	}{
		{"a marker", "", marker, marker},
		{"a second marker over the first", "", later, marker},
		{"a handle from a marker not there", later, handle, marker},
		{"the marker released", marker, "", ""},
		{"the marker again", "", later, later},
		{"the handle", later, handle, handle},
		{"a second handle", "", "projects/p/operations/2", handle},
		{"a handle over the handle", handle, "projects/p/operations/2", handle},
		{"the handle released", handle, "", handle},
	}
	want := tk
	want.Status, want.StartedAt = task.Processing, at(time.Second)
	for _, st := range steps {
		got, err := s.SetOperation(ctx, tk.ID, st.from, st.to)
		if err != nil {
			t.Fatalf("SetOperation %s: %v", st.name, err)
		}
		want.Operation = st.want
		checkTask(t, "SetOperation result, "+st.name, got, want)
		checkTask(t, "Task after SetOperation, "+st.name, mustTask(t, s, tk.ID), want)
	}

	// It survives the task's end, with the rest of the task.
	videos := []task.Video{{Key: "videos/a/0.mp4", MimeType: "video/mp4", Size: 1}}
	done := mustComplete(t, s, tk.ID, domain.Completion{Videos: videos}, at(time.Minute))
	if done.Operation != handle {
		t.Errorf("completed task has the handle %q, want %q", done.Operation, handle)
	}
	if _, err := s.SetOperation(ctx, "no-such-task", "", "op"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("SetOperation of an unknown task = %v, want ErrNotFound", err)
	}
}

// testCompleteBilling: the billing of a completion (route, provider
// model, provider cost) is kept on the completed task and read back, in
// Task and in the history, exactly; a late completion or a failure does
// not change it, and a failed task has none.
func testCompleteBilling(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 10)
	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	b := task.Billing{Route: "vertex", ProviderModel: "veo-3.1-fast-generate-001", CostUSD: 0.15 * 24}
	videos := []task.Video{{Key: "videos/a/0.mp4", MimeType: "video/mp4", Size: 1}}
	done := mustComplete(t, s, tk.ID, domain.Completion{Videos: videos, Billing: b}, at(time.Minute))
	if done.Billing != b {
		t.Errorf("Complete answered billing %+v, want %+v", done.Billing, b)
	}
	if got := mustTask(t, s, tk.ID).Billing; got != b {
		t.Errorf("Task billing %+v, want %+v", got, b)
	}
	page, _, err := s.Tasks(ctx, tk.AccountID, store.TaskQuery{Limit: 10})
	if err != nil || len(page) != 1 || page[0].Billing != b {
		t.Errorf("Tasks = %+v, %v; want the one task with billing %+v", page, err, b)
	}
	late := task.Billing{Route: "gemini", CostUSD: 9}
	mustComplete(t, s, tk.ID, domain.Completion{Videos: videos, Billing: late}, at(time.Hour))
	if _, err := s.Fail(ctx, tk.ID, task.Failure{Code: task.FailInternal}, at(time.Hour)); !errors.Is(err, domain.ErrTerminal) {
		t.Errorf("Fail of a completed task = %v, want ErrTerminal", err)
	}
	if got := mustTask(t, s, tk.ID).Billing; got != b {
		t.Errorf("billing after a late completion and failure %+v, want %+v", got, b)
	}

	failed := newTask("acct-a", taskID(at(0), "bbbbbbbbbb"), 10, at(0))
	mustCreate(t, s, failed)
	mustFail(t, s, failed.ID, task.Failure{Code: task.FailGeneration}, at(time.Minute))
	if got := mustTask(t, s, failed.ID).Billing; got != (task.Billing{}) {
		t.Errorf("a failed task has billing %+v, want none", got)
	}
}

// testSetProgress: the progress of a processing task is kept and
// replaced; a pending or finished task's is left as it is.
func testSetProgress(t *testing.T, s store.Store) {
	ctx := t.Context()
	tk := oneTask(t, s, 10)
	if err := s.SetProgress(ctx, tk.ID, 10); err != nil {
		t.Fatalf("SetProgress on a pending task: %v", err)
	}
	if got := mustTask(t, s, tk.ID).Progress; got != 0 {
		t.Errorf("a pending task has progress %d, want none", got)
	}
	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	for _, p := range []int{20, 65} {
		if err := s.SetProgress(ctx, tk.ID, p); err != nil {
			t.Fatalf("SetProgress(%d): %v", p, err)
		}
		if got := mustTask(t, s, tk.ID).Progress; got != p {
			t.Errorf("progress %d, want %d", got, p)
		}
	}
	mustFail(t, s, tk.ID, task.Failure{Code: task.FailInternal}, at(time.Minute))
	if err := s.SetProgress(ctx, tk.ID, 90); err != nil {
		t.Fatalf("SetProgress on a failed task: %v", err)
	}
	if got := mustTask(t, s, tk.ID).Progress; got != 65 {
		t.Errorf("a failed task's progress moved to %d, want it left at 65", got)
	}
}

// testTasksCursor: paging with After walks the whole history once, newest
// first, ties within a millisecond included, with or without a status;
// Skip counts from the cursor; a cursor whose task is gone still works.
func testTasksCursor(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 10000)
	mustAccount(t, s, "acct-b", 10000)
	var all []task.Task
	for i := range 11 {
		// Pairs share a millisecond, so the id decides within them.
		c := at(time.Duration(i/2) * time.Second)
		tk := newTask("acct-a", taskID(c, fmt.Sprintf("cursor%04d", i)), 10, c)
		mustCreate(t, s, tk)
		all = append(all, tk)
	}
	mustCreate(t, s, newTask("acct-b", taskID(at(time.Second), "otheracct0"), 10, at(time.Second)))
	for _, tk := range all[:4] {
		mustFail(t, s, tk.ID, task.Failure{Code: task.FailTimeout, Message: "x"}, at(time.Minute))
	}
	newestFirst := func(ts []task.Task) []string {
		ts = slices.Clone(ts)
		sort.Slice(ts, func(i, j int) bool {
			if a, b := ts[i].CreatedAt.UnixMilli(), ts[j].CreatedAt.UnixMilli(); a != b {
				return a > b
			}
			return ts[i].ID > ts[j].ID
		})
		return ids(ts)
	}

	for _, tt := range []struct {
		status task.Status
		want   []string
	}{
		{"", newestFirst(all)},
		{task.Failed, newestFirst(all[:4])},
		{task.Pending, newestFirst(all[4:])},
	} {
		var got []string
		var after store.TaskCursor
		for pages := 0; ; pages++ {
			if pages > len(tt.want) {
				t.Fatalf("status %q: paging does not end: %v", tt.status, got)
			}
			page, total, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Status: tt.status, After: after, Limit: 3})
			if err != nil {
				t.Fatalf("Tasks(status %q, after %+v): %v", tt.status, after, err)
			}
			if total != len(tt.want) {
				t.Errorf("status %q: total %d, want %d on every page", tt.status, total, len(tt.want))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, ids(page)...)
			after = store.CursorOf(page[len(page)-1])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("status %q: pages walk %v, want %v", tt.status, got, tt.want)
		}
	}

	order := newestFirst(all)
	// Skip counts from the cursor.
	page, _, err := s.Tasks(ctx, "acct-a", store.TaskQuery{After: store.CursorOf(mustTask(t, s, order[2])), Skip: 2, Limit: 2})
	if err != nil || !slices.Equal(ids(page), order[5:7]) {
		t.Errorf("after order[2], skip 2, limit 2 = %v, %v; want %v", ids(page), err, order[5:7])
	}
	// A cursor is a position, not a task: one between two tasks, or of
	// a task that does not exist, resumes where it falls.
	gone := store.CursorOf(mustTask(t, s, order[4]))
	gone.ID += "~"
	page, _, err = s.Tasks(ctx, "acct-a", store.TaskQuery{After: gone, Limit: 2})
	if err != nil || !slices.Equal(ids(page), order[4:6]) {
		t.Errorf("after a position just above order[4] = %v, %v; want %v", ids(page), err, order[4:6])
	}
}

// testTasksOrder: OldestFirst pages, with After as its cursor, walk the
// history once in the reverse of NewestFirst, with or without a status,
// ties within a millisecond included, with the same total on every page;
// Skip counts from the cursor in either order.
func testTasksOrder(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 10000)
	mustAccount(t, s, "acct-b", 10000)
	var all []task.Task
	for i := range 9 {
		// Triples share a millisecond, so the id decides within them.
		c := at(time.Duration(i/3) * time.Second)
		tk := newTask("acct-a", taskID(c, fmt.Sprintf("order%04d", i)), 10, c)
		mustCreate(t, s, tk)
		all = append(all, tk)
	}
	mustCreate(t, s, newTask("acct-b", taskID(at(time.Second), "otheracct0"), 10, at(time.Second)))
	for _, tk := range all[2:5] {
		mustFail(t, s, tk.ID, task.Failure{Code: task.FailTimeout, Message: "x"}, at(time.Minute))
	}

	walk := func(status task.Status, order store.Order) ([]string, []int) {
		t.Helper()
		var got []string
		var totals []int
		var after store.TaskCursor
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("status %q, order %d: paging does not end: %v", status, order, got)
			}
			page, total, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Status: status, Order: order, After: after, Limit: 2})
			if err != nil {
				t.Fatalf("Tasks(status %q, order %d, after %+v): %v", status, order, after, err)
			}
			totals = append(totals, total)
			if len(page) == 0 {
				return got, totals
			}
			got = append(got, ids(page)...)
			after = store.CursorOf(page[len(page)-1])
		}
	}
	for _, status := range []task.Status{"", task.Failed, task.Pending} {
		desc, descTotals := walk(status, store.NewestFirst)
		asc, ascTotals := walk(status, store.OldestFirst)
		var want []string
		for _, tk := range all {
			if status == "" || mustTask(t, s, tk.ID).Status == status {
				want = append(want, tk.ID)
			}
		}
		if !slices.Equal(asc, want) {
			t.Errorf("status %q: oldest first walks %v, want %v", status, asc, want)
		}
		reversed := slices.Clone(asc)
		slices.Reverse(reversed)
		if !slices.Equal(desc, reversed) {
			t.Errorf("status %q: newest first walks %v, want the reverse of oldest first %v", status, desc, asc)
		}
		for _, total := range append(descTotals, ascTotals...) {
			if total != len(want) {
				t.Errorf("status %q: totals %v newest first, %v oldest first; want %d on every page",
					status, descTotals, ascTotals, len(want))
				break
			}
		}
	}

	// Skip counts from the cursor oldest first too.
	page, _, err := s.Tasks(ctx, "acct-a", store.TaskQuery{
		Order: store.OldestFirst, After: store.CursorOf(mustTask(t, s, all[1].ID)), Skip: 2, Limit: 3})
	if want := ids(all[4:7]); err != nil || !slices.Equal(ids(page), want) {
		t.Errorf("oldest first after all[1], skip 2, limit 3 = %v, %v; want %v", ids(page), err, want)
	}
}
