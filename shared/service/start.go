package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// IdempotencyTTL is how long an Idempotency-Key names its start (contract
// decisions, "Extensions"): within it the same request is answered as the
// first start was, another request is a conflict.
const IdempotencyTTL = 24 * time.Hour

// StartRequest is a validated start.
type StartRequest struct {
	// TaskID is the new task's id (task.NewID), chosen by the caller
	// because the inputs' blob keys are made from it.
	TaskID  string
	Request params.Request
	// Inputs are the uploaded images, already in blob storage. Start owns
	// them: unless they become the new task's, it deletes them.
	Inputs []task.Input
	// Idempotency, when set, makes the start happen at most once per key
	// of the caller's account.
	Idempotency *Idempotency
}

// Idempotency is a start's Idempotency-Key and the hash of its request,
// which tells the same request from another one under the key.
type Idempotency struct {
	Key         string
	RequestHash string
}

// Started is what a start answers: the task as it was created and the
// balance its charge left, then or, for a replay, when it first ran.
type Started struct {
	Task     task.Task
	Balance  int64
	Replayed bool
	// Spend is what the key's spending caps allow after the start, as
	// its transaction left them (a replay's: as they are now); nil when
	// the key has no cap in force, or they could not be read.
	Spend []Allowance
}

// Start creates the task, charging for it and checking the start limits
// in one store transaction, and hands it to the workflow.
//
// With req.Idempotency, a start the account already made under that key
// is answered instead: the same request gets the first start's task and
// balance again (Replayed), another request an
// *IdempotencyConflictError. A first start whose workflow never ran was
// refunded and answered *NotStartedError; a retry under its key creates a
// task afresh, taking the key over.
//
// A store failure after which the task may exist (a lost reply) and a
// workflow that will not start are compensated: the task is failed and
// refunded before the error returns, so that "nothing was charged" holds.
func (s *Service) Start(ctx context.Context, c Caller, req StartRequest) (Started, error) {
	created := false
	defer func() {
		// Also on a panic: an uploaded image without a task is garbage.
		if !created {
			s.deleteInputs(ctx, req.Inputs)
		}
	}()
	if s.cfg.Executions == nil {
		return Started{}, ErrNoExecutions
	}
	t, g, err := s.newTask(ctx, c, req)
	if err != nil {
		return Started{}, err
	}
	if t.WebhookURL != "" {
		if err := s.ensureSigningSecret(ctx, c); err != nil {
			return Started{}, err
		}
	}
	if idem := req.Idempotency; idem != nil {
		g.Idempotency = &domain.IdempotencyKey{Key: idem.Key, RequestHash: idem.RequestHash, ExpiresAt: t.CreatedAt.Add(IdempotencyTTL)}
	}
	var charged domain.Charged
	for {
		var err error
		charged, err = s.cfg.Store.CreateTask(ctx, t, g)
		var used *domain.IdempotencyError
		if errors.As(err, &used) && g.Idempotency != nil {
			if used.RequestHash != g.Idempotency.RequestHash {
				return Started{}, &IdempotencyConflictError{TaskID: used.TaskID}
			}
			orig, err := s.original(ctx, c, used)
			if err != nil {
				return Started{}, err
			}
			if !orig.Task.NotStarted() {
				orig.Spend = s.CappedAllowances(ctx, c)
				return orig, nil
			}
			if g.Idempotency.Replaces != "" {
				// A concurrent retry took the key over, and its start
				// failed too.
				return Started{}, &NotStartedError{TaskID: orig.Task.ID}
			}
			g.Idempotency.Replaces = orig.Task.ID
			continue
		}
		if err != nil {
			if !s.undoCreate(ctx, t, err) {
				return Started{}, &ChargeUnknownError{TaskID: t.ID, Err: err}
			}
			return Started{}, fmt.Errorf("create task %s: %w", t.ID, err)
		}
		break
	}
	created = true

	// The task is charged: from here on it must be started or refunded,
	// even if the client goes away. But not after the request's deadline
	// (on AWS, a little before the Lambda's): a start still unfinished
	// then is refunded and answered 503 while the Lambda still runs,
	// instead of going on after the client was told 504. A charge the
	// store confirmed only after that deadline (a lost reply resolved)
	// still gets lateStart to start, the Reserve being there for it.
	startCtx, cancel := withDeadlineOnly(ctx, lateStart)
	defer cancel()
	ctx = context.WithoutCancel(ctx)
	if err := s.cfg.Executions.Start(startCtx, t); err != nil {
		s.abandon(ctx, t)
		return Started{}, &NotStartedError{TaskID: t.ID, Err: fmt.Errorf("start workflow: %w", err)}
	}
	st := Started{Task: t, Balance: charged.Balance}
	if len(charged.Spent) == len(g.Spend) {
		st.Spend = allowances(g.Spend, charged.Spent)
	}
	return st, nil
}

// ErrNoExecutions: the service was built without Executions, as a
// Lambda that serves no start is; asked to start, it is a wiring bug,
// refused before anything is charged.
var ErrNoExecutions = errors.New("service: no Executions: this service starts no generation")

// lateStart is the least time a charged task is given to start its
// workflow, however little is left of the request's deadline: a task
// answered 202 must have an execution, since the sweeper refunds, rather
// than runs, a pending task that never got one. It fits, with the
// store's resolution of a lost reply, in endpoint.Reserve.
const lateStart = 1500 * time.Millisecond

// withDeadlineOnly is ctx without its cancellation but with its deadline,
// or at least floor from now.
func withDeadlineOnly(ctx context.Context, floor time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	ctx = context.WithoutCancel(ctx)
	if !ok {
		return ctx, func() {}
	}
	if least := time.Now().Add(floor); d.Before(least) {
		d = least
	}
	return context.WithDeadline(ctx, d)
}

// newTask is the task a start of req by c would create and the guard
// its charge is checked under, or why req is refused before anything is
// read or charged: what the backend cannot honour (the capability
// table), a webhookUrl that cannot be delivered to. Start and Quote both
// begin here, so that a quote validates exactly as the start would.
func (s *Service) newTask(ctx context.Context, c Caller, req StartRequest) (task.Task, domain.StartGuard, error) {
	// What the backend cannot honour is refused before anything is
	// charged; what the client left out gets the backend's default.
	if err := s.cfg.Capabilities.Apply(&req.Request); err != nil {
		return task.Task{}, domain.StartGuard{}, err
	}
	// A model no route serves now would fail at its provider, after its
	// charge: refused first (issue 33).
	if s.Unavailable(ctx)[req.Request.Model] {
		return task.Task{}, domain.StartGuard{}, &ModelUnavailableError{Model: req.Request.Model}
	}
	// The client's own bound on the price, once the backend's defaults
	// (which may change it) are in.
	if m, cost := req.Request.MaxCredits, req.Request.Cost(); m > 0 && cost > m {
		return task.Task{}, domain.StartGuard{}, &MaxCreditsError{Cost: cost, Max: m}
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	t := task.Task{
		ID:          req.TaskID,
		AccountID:   c.Key.AccountID,
		KeyName:     c.Key.Name,
		KeyID:       c.Key.ID,
		Type:        req.Request.Type,
		Model:       req.Request.Model,
		Prompt:      req.Request.Prompt,
		Params:      req.Request.Params,
		Inputs:      req.Inputs,
		CreditsCost: req.Request.Cost(),
		Status:      task.Pending,
		CreatedAt:   at,
		Deadline:    at.Add(s.cfg.GenerationTimeout),
	}
	if u := req.Request.WebhookURL; u != "" {
		if s.cfg.Webhooks == nil {
			return task.Task{}, domain.StartGuard{}, ErrWebhooksUnavailable
		}
		if err := s.checkWebhookURL(ctx, "webhookUrl", u); err != nil {
			return task.Task{}, domain.StartGuard{}, err
		}
		t.WebhookURL = u
	}
	g := ratelimit.StartLimits(c.Key.ID, c.Limits, c.Now)
	g.Spend = spendGuard(c.Key, at)
	return t, g, nil
}

// original is the start an idempotency record names, as it answered: the
// task and the balance its charge left.
func (s *Service) original(ctx context.Context, c Caller, used *domain.IdempotencyError) (Started, error) {
	t, err := s.cfg.Store.Task(ctx, used.TaskID)
	if errors.Is(err, domain.ErrNotFound) {
		// The record and its task are written together, and the record
		// outlives the task only when the client deleted it (Delete):
		// the start is not made (and charged) again.
		return Started{}, &TaskDeletedError{TaskID: used.TaskID}
	}
	if err != nil {
		return Started{}, fmt.Errorf("task %s of an idempotency record: %w", used.TaskID, err)
	}
	if t.AccountID != c.Key.AccountID {
		return Started{}, fmt.Errorf("idempotency record of account %s names task %s of account %s",
			c.Key.AccountID, t.ID, t.AccountID)
	}
	return Started{Task: t, Balance: used.Balance, Replayed: true}, nil
}

// undoCreate is called when the store's CreateTask for t failed with err,
// and reports whether the client may be told that nothing was charged.
// Unless err is a refusal (which changed nothing), the store may have
// written the task before failing, its reply lost in an outage; so t is
// failed and refunded, as a start whose workflow never ran. A task that
// was never written is domain.ErrNotFound: nothing to undo, unless the
// store says its write may still land (store.ErrOutcomeUnknown). Then,
// or when the undo fails, nothing is proven: if the task exists, the
// sweeper fails and refunds it, since it never got an execution.
func (s *Service) undoCreate(ctx context.Context, t task.Task, err error) bool {
	if refused(err) {
		return true
	}
	ctx = context.WithoutCancel(ctx)
	switch ferr := s.refundUnstarted(ctx, t); {
	case ferr == nil:
		s.log.LogAttrs(ctx, slog.LevelWarn, "failed and refunded a task whose creation reported an error",
			slog.String("task", t.ID), slog.String("error", err.Error()))
		return true
	case errors.Is(ferr, domain.ErrNotFound) && !errors.Is(err, store.ErrOutcomeUnknown):
		return true
	default:
		s.log.LogAttrs(ctx, slog.LevelError, "cannot tell whether a task whose creation reported an error exists; "+
			"if it does, the sweep fails and refunds it",
			slog.String("task", t.ID), slog.String("error", errors.Join(err, ferr).Error()))
		return false
	}
}

// refused reports whether err is CreateTask refusing the start, which
// changes nothing.
func refused(err error) bool {
	var (
		credits  *domain.InsufficientCreditsError
		inFlight *domain.InFlightLimitError
		limit    *domain.LimitError
		used     *domain.IdempotencyError
		capped   *domain.SpendingCapError
	)
	return errors.As(err, &credits) || errors.As(err, &inFlight) || errors.As(err, &limit) || errors.As(err, &capped) ||
		errors.As(err, &used) || errors.Is(err, domain.ErrExists) || errors.Is(err, domain.ErrNotFound)
}

// abandon fails a task whose workflow did not start: the store refunds it
// in the same write (tried again briefly, refundUnstarted), and its inputs
// are deleted.
func (s *Service) abandon(ctx context.Context, t task.Task) {
	if err := s.refundUnstarted(ctx, t); err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "cannot fail and refund a task whose workflow did not start; it stays charged until the sweep refunds it",
			slog.String("task", t.ID), slog.String("error", err.Error()))
	}
	s.deleteInputs(ctx, t.Inputs)
}

// refundRetries are the pauses before each attempt of refundUnstarted.
var refundRetries = []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}

// refundUnstarted fails and refunds t, a task the client is about to be
// told was not started. A task left charged and pending here would be run
// until the sweep refunds it, making "nothing was charged" untrue a while; so the write is
// tried again a few times within about a second, which rides out a brief
// outage or a lost reply (Fail is idempotent). domain.ErrNotFound means the
// task was never written.
func (s *Service) refundUnstarted(ctx context.Context, t task.Task) error {
	var err error
	for _, pause := range refundRetries {
		if pause > 0 {
			timer := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				timer.Stop()
				return errors.Join(err, ctx.Err())
			case <-timer.C:
			}
		}
		_, err = s.cfg.Store.Fail(ctx, t.ID, task.NotStartedFailure, s.cfg.Now())
		if err == nil || errors.Is(err, domain.ErrNotFound) {
			return err
		}
	}
	return err
}

// deleteInputs removes uploaded images that no task owns. It runs even
// when the client has gone away.
func (s *Service) deleteInputs(ctx context.Context, inputs []task.Input) {
	ctx = context.WithoutCancel(ctx)
	for _, in := range inputs {
		s.DeleteBlob(ctx, in.Key)
	}
}

// DeleteBlob removes an uploaded image a refused request left behind; a
// failure is logged, not returned, since the request is refused anyway.
func (s *Service) DeleteBlob(ctx context.Context, key string) {
	if err := s.cfg.Blobs.Delete(context.WithoutCancel(ctx), key); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "delete uploaded image", slog.String("key", key), slog.String("error", err.Error()))
	}
}
