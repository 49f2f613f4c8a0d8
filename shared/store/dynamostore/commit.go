package dynamostore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// A start's charge is one TransactWriteItems, and its reply can be lost
// after DynamoDB applied it: the request's deadline cuts the call in
// flight, the connection drops, a 5xx comes back. Telling the client
// "nothing was charged" then is a guess, and a wrong one leaves a
// charged task that the client believes was never made. So each attempt
// carries a ClientRequestToken, and a lost reply is resolved by sending
// the very same request again before answering.
//
// DynamoDB's documented semantics of ClientRequestToken (TransactWriteItems
// API reference, as reproduced in
// https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/dynamodb/aws.sdk.kotlin.services.dynamodb.model/-transact-write-items-request/client-request-token.html,
// read 2026-11-28): identical calls with the same token "have the same
// effect as one single call"; a repeat of a call that succeeded returns
// success "without making any changes"; the token is valid for 10 minutes
// after the first request using it completes; the same token with other
// parameters is IdempotentParameterMismatch. A call whose token is still
// being processed is TransactionInProgressException (API reference,
// Errors), which says nothing yet and is asked again.
//
// So a re-send answers for the first send: success means the task is
// written and charged (by the first send or by this one); canceled means
// neither send applied, and the first never will once the account's
// last stamp is raised to the attempt's (burn): its account condition
// (last below its stamp) can then never hold again, whatever happens to
// the balance or the windows that refused the re-send. Only when every
// re-send is itself lost is the outcome unknown.

// createToken is a fresh ClientRequestToken, for one attempt of a start's
// transaction; its re-sends reuse it. It is random, not made from the
// task id: a token names one request account-wide for 10 minutes, and a
// task id can meet another request under the same token (the same id on
// other tables, as the tests do, or a task created again after it was
// deleted) that DynamoDB would then answer as already applied, or refuse
// as IdempotentParameterMismatch. The next attempt, which writes values
// read afresh, takes a new one. DynamoDB takes 1 to 36 characters.
func createToken() string {
	b := make([]byte, 18)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Resolving a lost reply: a fresh context (the request's may be over),
// short enough to leave the start time to hand the task to its workflow
// or refund it within endpoint.Reserve.
const resolveBudget = 1500 * time.Millisecond

// resendPauses are the pauses before each re-send.
var resendPauses = []time.Duration{0, 50 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond}

// commitCreate writes items, the transaction of a start of t, with token;
// it returns what transact would, except that a lost reply is resolved:
// nil if the transaction applied, errRetry (or, once ctx is over, the
// loss as store.ErrUnavailable) if it did not, and an error wrapping
// store.ErrOutcomeUnknown if DynamoDB could not tell.
func (s *Store) commitCreate(ctx context.Context, op string, t task.Task, items []types.TransactWriteItem, token string, charge int64) error {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: &token}
	_, err := s.db.TransactWriteItems(ctx, in)
	if err == nil || !ambiguous(err) {
		return transactErr(op, err)
	}
	lost := err
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveBudget)
	defer cancel()
	for _, pause := range resendPauses {
		if pause > 0 {
			timer := time.NewTimer(pause)
			select {
			case <-rctx.Done():
				timer.Stop()
				return fmt.Errorf("%s: %w: %w: %w", op, store.ErrUnavailable, store.ErrOutcomeUnknown, errors.Join(lost, err))
			case <-timer.C:
			}
		}
		_, err = s.db.TransactWriteItems(rctx, in)
		if err == nil {
			return nil
		}
		if codes, ok := canceled(err); ok {
			if s.written(rctx, t, codes) {
				return nil
			}
			// Not applied, by the first send or this one. The first
			// could still land if it were held up on the way and the
			// condition that refused the re-send (a balance, a
			// window) changed meanwhile: raising the account's last
			// to the charge's stamp makes sure it never does.
			if err := s.burn(rctx, t.AccountID, charge); err != nil {
				return fmt.Errorf("%s: %w: %w: %w", op, store.ErrUnavailable, store.ErrOutcomeUnknown, errors.Join(lost, err))
			}
			if ctx.Err() == nil {
				return errRetry
			}
			return dbErr(op, lost)
		}
		var mismatch *types.IdempotentParameterMismatchException
		if errors.As(err, &mismatch) {
			// A bug: one token, two requests. What the first did is
			// not known.
			break
		}
	}
	return fmt.Errorf("%s: %w: %w: %w", op, store.ErrUnavailable, store.ErrOutcomeUnknown, errors.Join(lost, err))
}

// burn raises the account's last stamp to charge, if it is below, so
// that no transaction stamped charge can apply any more.
func (s *Store) burn(ctx context.Context, accountID string, charge int64) error {
	u := update{table: s.t.Accounts, key: accountKey(accountID), expr: "SET #last = :stamp",
		cond: "attribute_exists(#acct) AND (attribute_not_exists(#last) OR #last < :stamp)", vals: vals{":stamp": num(charge)}}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, ok := conditionFailed(err); ok {
			return nil
		}
		return err
	}
	return nil
}

// written reports whether a re-send canceled with codes failed because
// the first send had written t: its task item's condition failed and the
// task is there, t's own. DynamoDB answers such a re-send with success
// while the token is valid; this covers a store that does not honour
// tokens, or a token past its window.
func (s *Store) written(ctx context.Context, t task.Task, codes []string) bool {
	if len(codes) <= createTaskIndex || codes[createTaskIndex] != "ConditionalCheckFailed" {
		return false
	}
	it, err := s.getItem(ctx, s.t.Tasks, taskKey(t.ID))
	if err != nil || it == nil {
		return false
	}
	return getS(it, attrAccount) == t.AccountID && getN(it, "createdAt") == ms(t.CreatedAt)
}

// ambiguous reports whether err, the error of a write, leaves it unknown
// whether DynamoDB applied the write: no reply (the deadline or a
// cancellation cut the call, the connection failed), a server error, or
// the same token still in progress. A refusal (canceled, throttled,
// invalid) is not: DynamoDB answered that it did not apply it.
func ambiguous(err error) bool {
	if _, ok := canceled(err); ok {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() == "TransactionInProgressException" || ae.ErrorFault() == smithy.FaultServer
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode() >= 500
	}
	var send *smithyhttp.RequestSendError
	var ne net.Error
	return errors.As(err, &send) || errors.As(err, &ne)
}
