// Package storetest is the conformance suite of store.Store: the
// behaviour every storage backend must show, whatever it is built on.
// A backend's tests call Run with a function that opens a fresh, empty
// store; property tests elsewhere reuse CheckInvariants.
package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// Backend is what the suite holds a storage backend to: the store, its
// webhooks and the provider routes' checks, which both backends keep.
type Backend interface {
	store.Store
	store.Webhooks
	store.RouteChecks
}

// Run runs the suite. open must return a fresh, empty store for each call
// and close it when the test that asked for it ends (t.Cleanup). The suite
// passes every time explicitly and never sleeps. opts add what a backend
// can do beyond the interface (WithReopen, WithExpire).
func Run(t *testing.T, open func(t *testing.T) Backend, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Accounts", testAccounts},
		{"OpeningBalance", testOpeningBalance},
		{"Grant", testGrant},
		{"Keys", testKeys},
		{"Take", testTake},
		{"TakeAllOrNothing", testTakeAllOrNothing},
		{"TakeWindowExpiry", testTakeWindowExpiry},
		{"LimitErrorCounter", testLimitErrorCounter},
		{"CreateTask", testCreateTask},
		{"CreateTaskUnknownAccount", testCreateTaskUnknownAccount},
		{"CreateTaskInsufficientCredits", testCreateTaskInsufficientCredits},
		{"CreateTaskInFlightLimit", testCreateTaskInFlightLimit},
		{"CreateTaskStartsCounter", testCreateTaskStartsCounter},
		{"CreateTaskDuplicateID", testCreateTaskDuplicateID},
		{"Tasks", testTasks},
		{"TasksCursor", testTasksCursor},
		{"TasksOrder", testTasksOrder},
		{"TotalCounts", func(t *testing.T, s store.Store) { testTotalCounts(t, s, cfg) }},
		{"MarkProcessing", testMarkProcessing},
		{"SetOperation", testSetOperation},
		{"SetProgress", testSetProgress},
		{"Complete", testComplete},
		{"CompleteBilling", testCompleteBilling},
		{"CompleteRefundOutOfRange", testCompleteRefundOutOfRange},
		{"Fail", testFail},
		{"KeyCaps", testKeyCaps},
		{"CreateTaskSpendCap", testCreateTaskSpendCap},
		{"RaceSpendCap", testRaceSpendCap},
		{"RaceCharges", testRaceCharges},
		{"RaceInFlight", testRaceInFlight},
		{"RaceFailComplete", testRaceFailComplete},
		{"RaceFail", testRaceFail},
		{"RaceTake", testRaceTake},
		{"RaceTakeTwo", testRaceTakeTwo},
		{"Streams", testStreams},
		{"RaceStreams", testRaceStreams},
		{"RaceGrantsAndCharges", testRaceGrantsAndCharges},
		{"IdempotencyReplay", testIdempotencyReplay},
		{"IdempotencyScope", testIdempotencyScope},
		{"IdempotencyExpiry", testIdempotencyExpiry},
		{"IdempotencyRefusedStart", testIdempotencyRefusedStart},
		{"IdempotencyReplaces", testIdempotencyReplaces},
		{"IdempotencyBalance", testIdempotencyBalance},
		{"RaceIdempotency", testRaceIdempotency},
		{"LedgerPage", testLedgerPage},
		{"Held", testHeld},
		{"DeleteTask", testDeleteTask},
		{"DeleteKeepsIdempotency", testDeleteKeepsIdempotency},
		{"RaceCancelComplete", testRaceCancelComplete},
		{"LedgerProperties", func(t *testing.T, s store.Store) { testLedgerProperties(t, s, cfg) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, s Backend)
	}{
		{"WebhookEndpoints", testWebhookEndpoints},
		{"WebhookOutbox", testWebhookOutbox},
		{"WebhookOutboxNotOnRefusedMove", testWebhookOutboxRefused},
		{"WebhookDeliveries", testWebhookDeliveries},
		{"WebhookClaimFits", testWebhookClaimFits},
		{"RouteChecks", testRouteChecks},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// t0 is the suite's clock: every time is an offset from it.
var t0 = time.Date(2025, 11, 13, 10, 0, 0, 0, time.UTC)

// cet is a zone other than UTC, to check that times come back in UTC.
var cet = time.FixedZone("CET", 3600)

// at is t0 plus d, with a sub-millisecond part and in another zone, which
// a store may drop: times round-trip to the millisecond, in UTC.
func at(d time.Duration) time.Time { return t0.Add(d + 123*time.Microsecond).In(cet) }

// sameTime reports whether got is want as a store returns it: in UTC and
// within a millisecond, or zero when want is.
func sameTime(got, want time.Time) bool {
	if want.IsZero() {
		return got.IsZero()
	}
	d := got.Sub(want)
	return got.Location() == time.UTC && d > -time.Millisecond && d < time.Millisecond
}

// taskID is a well-formed task id created at c with the given suffix.
func taskID(c time.Time, suffix string) string {
	return fmt.Sprintf("gen_%d_%s", c.UnixMilli(), suffix)
}

// newTask is a task of account with every field the caller sets at start
// filled in.
func newTask(account, id string, cost int, created time.Time) task.Task {
	return task.Task{
		ID:        id,
		AccountID: account,
		KeyName:   "ci key",
		Type:      "image-to-video",
		Model:     "gen-3.1-fast-generate-001",
		Prompt:    "a heron lands on a pier at dawn, \"quoted\"\nsecond line",
		Params: params.Parameters{
			SampleCount: 2, DurationSeconds: 6, AspectRatio: "9:16", Resolution: "1080p",
			GenerateAudio: true, EnhancePrompt: false, NegativePrompt: "blur",
			Seed: new(int64(4294967295)), PersonGeneration: "dont_allow",
		},
		Inputs: []task.Input{{
			Role: task.RoleImage, Key: "inputs/" + id + "/image.png",
			OriginalName: "héron.png", Size: 123456, MimeType: "image/png",
		}},
		CreditsCost: cost,
		CreatedAt:   created,
		Deadline:    created.Add(10 * time.Minute),
	}
}

// mustAccount creates account id holding credits.
func mustAccount(t *testing.T, s store.Store, id string, credits int64) {
	t.Helper()
	if err := s.CreateAccount(t.Context(), domain.Account{ID: id, Credits: credits, CreatedAt: at(0)}); err != nil {
		t.Fatalf("CreateAccount(%s, %d credits): %v", id, credits, err)
	}
}

// oneTask opens acct-a with 100 credits and starts on it the one task a
// test of a single task's moves needs: cost credits, created at t0.
func oneTask(t *testing.T, s store.Store, cost int) task.Task {
	t.Helper()
	mustAccount(t, s, "acct-a", 100)
	tk := newTask("acct-a", taskID(at(0), "aaaaaaaaaa"), cost, at(0))
	mustCreate(t, s, tk)
	return tk
}

// mustCreate creates tk with no guard and fails the test if it cannot;
// mustStart does the same under guard g.
func mustCreate(t *testing.T, s store.Store, tk task.Task) {
	t.Helper()
	mustStart(t, s, tk, domain.StartGuard{})
}

func mustStart(t *testing.T, s store.Store, tk task.Task, g domain.StartGuard) {
	t.Helper()
	if _, err := s.CreateTask(t.Context(), tk, g); err != nil {
		t.Fatalf("CreateTask(%s, %+v): %v", tk.ID, g, err)
	}
}

func mustAccountState(t *testing.T, s store.Store, id string) domain.Account {
	t.Helper()
	a, err := s.Account(t.Context(), id)
	if err != nil {
		t.Fatalf("Account(%s): %v", id, err)
	}
	return a
}

func mustLedger(t *testing.T, s store.Store, id string) []domain.LedgerEntry {
	t.Helper()
	l, err := s.Ledger(t.Context(), id)
	if err != nil {
		t.Fatalf("Ledger(%s): %v", id, err)
	}
	return l
}

func mustTask(t *testing.T, s store.Store, id string) task.Task {
	t.Helper()
	tk, err := s.Task(t.Context(), id)
	if err != nil {
		t.Fatalf("Task(%s): %v", id, err)
	}
	return tk
}

// wantHolding fails the test unless account holds credits, with inFlight
// tasks in flight, after what.
func wantHolding(t *testing.T, s store.Store, account string, credits int64, inFlight int, what string) {
	t.Helper()
	if a := mustAccountState(t, s, account); a.Credits != credits || a.InFlight != inFlight {
		t.Errorf("after %s: %d credits, %d in flight; want %d, %d", what, a.Credits, a.InFlight, credits, inFlight)
	}
}

// snapshot is what a rejected call must leave as it was.
type snapshot struct {
	credits  int64
	inFlight int
	entries  int
	tasks    int
}

func takeSnapshot(t *testing.T, s store.Store, account string) snapshot {
	t.Helper()
	a := mustAccountState(t, s, account)
	_, total, err := s.Tasks(t.Context(), account, store.TaskQuery{Limit: 1})
	if err != nil {
		t.Fatalf("Tasks(%s): %v", account, err)
	}
	return snapshot{credits: a.Credits, inFlight: a.InFlight, entries: len(mustLedger(t, s, account)), tasks: total}
}

// unchanged fails the test if account differs from before.
func unchanged(t *testing.T, s store.Store, account string, before snapshot, what string) {
	t.Helper()
	if after := takeSnapshot(t, s, account); after != before {
		t.Errorf("after %s: account %s is %+v, want it unchanged %+v", what, account, after, before)
	}
}

// diffTask lists the fields in which got differs from want, a task as
// written, with times compared as sameTime does.
func diffTask(got, want task.Task) []string {
	var d []string
	field := func(name string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			d = append(d, fmt.Sprintf("%s = %#v, want %#v", name, g, w))
		}
	}
	when := func(name string, g, w time.Time) {
		if !sameTime(g, w) {
			d = append(d, fmt.Sprintf("%s = %v, want %v (UTC, to the millisecond)", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("AccountID", got.AccountID, want.AccountID)
	field("KeyName", got.KeyName, want.KeyName)
	field("Type", got.Type, want.Type)
	field("Model", got.Model, want.Model)
	field("Prompt", got.Prompt, want.Prompt)
	field("Params", got.Params, want.Params)
	if len(got.Inputs)+len(want.Inputs) > 0 {
		field("Inputs", got.Inputs, want.Inputs)
	}
	field("CreditsCost", got.CreditsCost, want.CreditsCost)
	field("CreditsRefunded", got.CreditsRefunded, want.CreditsRefunded)
	field("Status", got.Status, want.Status)
	when("CreatedAt", got.CreatedAt, want.CreatedAt)
	when("StartedAt", got.StartedAt, want.StartedAt)
	when("CompletedAt", got.CompletedAt, want.CompletedAt)
	when("Deadline", got.Deadline, want.Deadline)
	if len(got.Videos)+len(want.Videos) > 0 {
		field("Videos", got.Videos, want.Videos)
	}
	field("Failure", got.Failure, want.Failure)
	field("WebhookURL", got.WebhookURL, want.WebhookURL)
	field("Operation", got.Operation, want.Operation)
	return d
}

// checkTask fails the test if got is not want.
func checkTask(t *testing.T, what string, got, want task.Task) {
	t.Helper()
	if d := diffTask(got, want); len(d) > 0 {
		t.Errorf("%s: task %s:\n\t%s", what, want.ID, strings.Join(d, "\n\t"))
	}
}

// ids returns the ids of tasks, in order.
func ids(tasks []task.Task) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.ID
	}
	return out
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// taskEntries returns the ledger entries of one task.
func taskEntries(entries []domain.LedgerEntry, taskID, kind string) []domain.LedgerEntry {
	var out []domain.LedgerEntry
	for _, e := range entries {
		if e.TaskID == taskID && e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// wantErrIs fails the test unless err is target.
func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

// mustMarkProcessing, mustComplete and mustFail move a task as a test's
// setup needs it moved, and fail the test if the store refuses.
func mustMarkProcessing(t *testing.T, s store.Store, id string, when time.Time) task.Task {
	t.Helper()
	tk, err := s.MarkProcessing(t.Context(), id, when)
	if err != nil {
		t.Fatalf("MarkProcessing(%s): %v", id, err)
	}
	return tk
}

func mustComplete(t *testing.T, s store.Store, id string, c domain.Completion, when time.Time) task.Task {
	t.Helper()
	tk, err := s.Complete(t.Context(), id, c, when)
	if err != nil {
		t.Fatalf("Complete(%s, refund %d): %v", id, c.Refund, err)
	}
	return tk
}

func mustFail(t *testing.T, s store.Store, id string, f task.Failure, when time.Time) task.Task {
	t.Helper()
	tk, err := s.Fail(t.Context(), id, f, when)
	if err != nil {
		t.Fatalf("Fail(%s, %s): %v", id, f.Code, err)
	}
	return tk
}
