package dynamostore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// lossy is a DynamoDB client whose first lost TransactWriteItems calls
// lose their reply, as when the request's deadline cuts a call in
// flight: the call reaches DynamoDB (apply) or not, and the caller gets
// the deadline's error either way.
type lossy struct {
	api
	lost  int    // how many calls lose their reply
	apply bool   // whether a lost call reached DynamoDB
	cut   func() // ends the caller's context with a lost call
	then  func() // runs after a lost call, before the caller sees it; may be nil
	calls atomic.Int64
	token atomic.Value // the ClientRequestToken of each call must be one
	mixed atomic.Bool
}

func (l *lossy) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	n := int(l.calls.Add(1))
	tok := ""
	if in.ClientRequestToken != nil {
		tok = *in.ClientRequestToken
	}
	if prev := l.token.Swap(tok); prev != nil && prev != tok {
		l.mixed.Store(true)
	}
	if n > l.lost {
		return l.api.TransactWriteItems(ctx, in, opts...)
	}
	if l.apply {
		if _, err := l.api.TransactWriteItems(context.WithoutCancel(ctx), in, opts...); err != nil {
			return nil, err
		}
	}
	l.cut()
	if l.then != nil {
		l.then()
	}
	return nil, &deadlineError{}
}

// deadlineError is what the SDK returns when the deadline cuts a call.
type deadlineError struct{}

func (*deadlineError) Error() string {
	return "operation error DynamoDB: TransactWriteItems, context deadline exceeded"
}
func (*deadlineError) Unwrap() error { return context.DeadlineExceeded }

// TestCreateTaskLostReply: a start's transaction whose reply is lost
// (issue 34, defect 4: the deadline cut a commit that DynamoDB then
// applied, the start answered 503 "nothing was charged", the sweeper ran
// the task). CreateTask re-sends it with its ClientRequestToken before
// it answers: it reports the task created exactly when it was, charged
// once, and store.ErrOutcomeUnknown only when no re-send got through.
func TestCreateTaskLostReply(t *testing.T) {
	tests := []struct {
		name      string
		lost      int
		apply     bool
		interfere bool // the account moves between the send and the re-send
		created   bool // CreateTask returns nil and the task is charged
		unknown   bool // the error says the outcome is unknown
	}{
		{"applied, reply lost", 1, true, false, true, false},
		// The re-send is the first to reach DynamoDB: it applies.
		{"not applied, reply lost", 1, false, false, true, false},
		// The re-send's conditions fail: neither send applied.
		{"not applied, account moved", 1, false, true, false, false},
		{"applied, every reply lost", 1 + len(resendPauses), true, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			const acct, credits = "acct-lost", 100
			if err := s.CreateAccount(t.Context(), domain.Account{ID: acct, CreatedAt: t0}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Grant(t.Context(), acct, credits, "", t0); err != nil {
				t.Fatal(err)
			}
			// The request's deadline ends with the lost call, as in the
			// issue.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			l := &lossy{api: s.db, lost: tt.lost, apply: tt.apply, cut: cancel}
			granted := int64(0)
			if tt.interfere {
				other := New(dynamolocal.Shared(t).Client(), Config{Tables: s.Tables()})
				l.then = func() {
					if _, err := other.Grant(context.Background(), acct, 5, "", t0); err != nil {
						t.Error(err)
					}
				}
				granted = 5
			}
			s.db = l
			tk := task.Task{ID: task.NewID(t0), AccountID: acct, Type: "text-to-video", Model: "m", Prompt: "p",
				CreditsCost: 30, Status: task.Pending, CreatedAt: t0, Deadline: t0.Add(time.Hour)}
			charged, err := s.CreateTask(ctx, tk, domain.StartGuard{})
			bal := charged.Balance
			s.db = l.api

			if l.mixed.Load() {
				t.Errorf("the re-sends carried another ClientRequestToken than the first send")
			}
			if got := int(l.calls.Load()); got < 2 {
				t.Errorf("%d TransactWriteItems calls, want the lost one re-sent", got)
			}
			_, terr := s.Task(context.Background(), tk.ID)
			a, aerr := s.Account(context.Background(), acct)
			if aerr != nil {
				t.Fatal(aerr)
			}
			switch {
			case tt.created:
				if err != nil || bal != credits-30 {
					t.Errorf("CreateTask = %d, %v; want %d, nil: the transaction applied", bal, err, credits-30)
				}
				if terr != nil || a.Credits != credits-30 {
					t.Errorf("task: %v, credits %d; want the task, charged once (%d)", terr, a.Credits, credits-30)
				}
			case tt.unknown:
				if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.Is(err, store.ErrUnavailable) {
					t.Errorf("CreateTask: %v; want store.ErrOutcomeUnknown with store.ErrUnavailable", err)
				}
			default:
				if err == nil || errors.Is(err, store.ErrOutcomeUnknown) || !errors.Is(err, store.ErrUnavailable) {
					t.Errorf("CreateTask: %v; want store.ErrUnavailable, the outcome known", err)
				}
				if !errors.Is(terr, domain.ErrNotFound) || a.Credits != credits+granted {
					t.Errorf("task: %v, credits %d; want no task and %d credits", terr, a.Credits, credits+granted)
				}
			}
			storetest.CheckInvariants(t, s, acct)
		})
	}
}

func TestCreateToken(t *testing.T) {
	a, b := createToken(), createToken()
	if a == b {
		t.Errorf("two tokens %q: want one per attempt", a)
	}
	if n := len(a); n < 1 || n > 36 {
		t.Errorf("token %q has %d characters; DynamoDB takes 1 to 36", a, n)
	}
}
