// Package dynamostore is the AWS storage backend: a store.Store kept in
// four DynamoDB tables (accounts with their ledger and idempotency
// records, API keys, rate-limit counters, tasks). Every method that moves
// credits or changes a task is one TransactWriteItems whose condition
// expressions hold the invariants, so that concurrent Lambdas can neither
// overspend an account, start a task twice under one idempotency key, nor
// refund a task twice. infra/docs/dynamodb-tables.md describes the tables,
// their keys and indexes and the shape of every item.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/genvideo/gen/shared/store"
)

var _ store.Store = (*Store)(nil)

// DefaultTablePrefix prefixes the table names when Config names none.
const DefaultTablePrefix = "gen-"

// Tables names the four tables.
type Tables struct {
	Accounts string // accounts and their ledger entries
	Keys     string // API keys
	Counters string // rate-limit windows
	Tasks    string // generation tasks
	// Webhooks holds webhook endpoints, signing secrets, the outbox and
	// the delivery attempts (webhooks.go).
	Webhooks string
}

// Config says which tables the store uses. A name left empty in Tables is
// TablePrefix followed by "accounts", "keys", "counters" or "tasks"; the
// prefix defaults to DefaultTablePrefix.
type Config struct {
	TablePrefix string
	Tables      Tables
	// TaskRetention, when positive, gives each task a ttl of its creation
	// plus this, for the tasks table's TTL to delete it with its videos.
	TaskRetention time.Duration
}

// tables fills in the names c leaves empty.
func (c Config) tables() Tables {
	p := c.TablePrefix
	if p == "" {
		p = DefaultTablePrefix
	}
	t := c.Tables
	for _, f := range []struct {
		name *string
		base string
	}{{&t.Accounts, "accounts"}, {&t.Keys, "keys"}, {&t.Counters, "counters"}, {&t.Tasks, "tasks"},
		{&t.Webhooks, "webhooks"}} {
		if *f.name == "" {
			*f.name = p + f.base
		}
	}
	return t
}

// api is the part of the DynamoDB client the store calls.
type api interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Store is a store.Store on DynamoDB. It is safe for concurrent use, by
// goroutines and by processes: all coordination is in the tables.
type Store struct {
	db     api
	admin  *dynamodb.Client // for CreateTables; nil in tests of the data path
	t      Tables
	keep   time.Duration    // Config.TaskRetention
	now    func() time.Time // the real clock, for TTLs only
	closed atomic.Bool
}

// New returns a store on the tables cfg names, through client. It does
// not check that the tables exist: CreateTables makes them.
func New(client *dynamodb.Client, cfg Config) *Store {
	return &Store{db: client, admin: client, t: cfg.tables(), keep: cfg.TaskRetention, now: time.Now}
}

// Tables returns the names of the tables the store uses.
func (s *Store) Tables() Tables { return s.t }

// Close makes every later call fail with store.ErrUnavailable. The client
// is the caller's and stays usable.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// check fails once the store is closed.
func (s *Store) check(op string) error {
	if s.closed.Load() {
		return fmt.Errorf("%s: %w: store closed", op, store.ErrUnavailable)
	}
	return nil
}

// Optimistic writes: a write conditioned on what was just read (a task's
// status, a window as read) or on a stamp fails when someone else wrote
// in between, and is retried. Credit movements need no read (see
// lastStamp), so a busy account's writers mostly add up; the bound is
// generous for the rest, and the backoff spreads the losers out.
const (
	maxAttempts = 100
	backoffBase = 2 * time.Millisecond
	backoffCap  = 64 * time.Millisecond
)

// errRetry is returned by a step of retry to ask for another attempt: the
// state it read changed before its write.
var errRetry = errors.New("contended, retry")

// errThrottled: DynamoDB kept leaving part of a batch unprocessed.
var errThrottled = errors.New("throttled")

// retry runs fn until it returns something other than errRetry, sleeping
// a jittered, growing backoff between attempts. It gives up with
// store.ErrUnavailable after maxAttempts.
func (s *Store) retry(ctx context.Context, op string, fn func() error) error {
	if err := s.check(op); err != nil {
		return err
	}
	for attempt := range maxAttempts {
		if attempt > 0 {
			if err := s.check(op); err != nil {
				return err
			}
		}
		err := fn()
		if !errors.Is(err, errRetry) {
			return err
		}
		d := min(backoffCap, backoffBase<<min(attempt, 10))
		timer := time.NewTimer(rand.N(d) + time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return dbErr(op, ctx.Err())
		case <-timer.C:
		}
	}
	return fmt.Errorf("%s: %w: still contended after %d attempts", op, store.ErrUnavailable, maxAttempts)
}

// dbErr adds op to an error of DynamoDB, and store.ErrUnavailable when
// DynamoDB could not serve the call (throttled, failing, unreachable, out
// of time) rather than refused it.
func dbErr(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errThrottled) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"InternalServerError", "InternalFailure", "ServiceUnavailable", "ServiceUnavailableException",
			"TransactionConflictException", "TransactionInProgressException", "LimitExceededException":
			return true
		}
		if ae.ErrorFault() == smithy.FaultServer {
			return true
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return true
	}
	// No answer at all: connection refused or reset, DNS, a timeout.
	var send *smithyhttp.RequestSendError
	var ne net.Error
	return errors.As(err, &send) || errors.As(err, &ne)
}

// canceled reports why a TransactWriteItems was canceled: the code of
// each of its items, in order ("None", "ConditionalCheckFailed",
// "TransactionConflict", ...). ok is false for any other error.
func canceled(err error) (codes []string, ok bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	codes = make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		if r.Code != nil {
			codes[i] = *r.Code
		}
	}
	return codes, true
}

// transact writes items in one transaction. A transaction canceled by a
// conflict with another comes back as errRetry; one canceled by a failed
// condition as a *conditionError naming the items whose condition failed,
// for the caller to interpret; one canceled by throttling as
// store.ErrUnavailable.
func (s *Store) transact(ctx context.Context, op string, items []types.TransactWriteItem) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return transactErr(op, err)
}

// transactErr is what transact returns for err, the error of a
// TransactWriteItems (nil for none).
func transactErr(op string, err error) error {
	if err == nil {
		return nil
	}
	codes, ok := canceled(err)
	if !ok {
		var tc *types.TransactionConflictException
		if errors.As(err, &tc) {
			return errRetry
		}
		return dbErr(op, err)
	}
	ce := &conditionError{}
	conflict := false
	for i, c := range codes {
		switch c {
		case "", "None":
		case "ConditionalCheckFailed":
			ce.failed = append(ce.failed, i)
		case "TransactionConflict":
			conflict = true
		case "ThrottlingError", "ProvisionedThroughputExceeded":
			return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
		default:
			return dbErr(op, err)
		}
	}
	switch {
	case len(ce.failed) > 0:
		return ce
	case conflict:
		return errRetry
	}
	return dbErr(op, err)
}

// conditionError: the conditions of the items at these indexes failed.
type conditionError struct{ failed []int }

func (e *conditionError) Error() string {
	return fmt.Sprintf("transaction canceled: conditions failed on items %v", e.failed)
}

// has reports whether the condition of item i failed.
func (e *conditionError) has(i int) bool {
	for _, f := range e.failed {
		if f == i {
			return true
		}
	}
	return false
}

// conditionFailed reports whether err is a failed condition of a single
// write, and returns the item as it was when the write asked for it.
func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// Building expressions. Every attribute name in an expression is written
// "#name" and every value ":name"; names() derives the name map from the
// expressions, so that a reserved word (status, name, count, ttl...) never
// breaks one and no placeholder is left unused.

var namePattern = regexp.MustCompile(`#[A-Za-z0-9_]+`)

// names maps each "#x" in the expressions to the attribute "x".
func names(exprs ...*string) map[string]string {
	m := map[string]string{}
	for _, e := range exprs {
		if e == nil {
			continue
		}
		for _, n := range namePattern.FindAllString(*e, -1) {
			m[n] = n[1:]
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// item is a DynamoDB item.
type item = map[string]types.AttributeValue

// vals are expression values.
type vals = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num[T int | int64](v T) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(v), 10)}
}

// getF is the number attribute name of it as a float, or 0.
func getF(it item, name string) float64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		f, err := strconv.ParseFloat(v.Value, 64)
		if err == nil {
			return f
		}
	}
	return 0
}

// getS is the string attribute name of it, or "".
func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// getN is the number attribute name of it, or 0.
func getN(it item, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err == nil {
			return n
		}
	}
	return 0
}

// ms is t as stored: unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS is the time stored as v, in UTC.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// putTime sets attribute name of it to t, or leaves it out for the zero
// time.
func putTime(it item, name string, t time.Time) {
	if !t.IsZero() {
		it[name] = num(ms(t))
	}
}

// getTime is the time attribute name of it, or the zero time.
func getTime(it item, name string) time.Time {
	if _, ok := it[name]; !ok {
		return time.Time{}
	}
	return fromMS(getN(it, name))
}

// update is one UpdateItem, usable alone or in a transaction.
type update struct {
	table string
	key   item
	expr  string // SET ... REMOVE ... ADD ...
	cond  string // may be empty
	vals  vals
}

func (u update) transactItem() types.TransactWriteItem {
	up := &types.Update{
		TableName:                 &u.table,
		Key:                       u.key,
		UpdateExpression:          &u.expr,
		ExpressionAttributeNames:  names(&u.expr, &u.cond),
		ExpressionAttributeValues: nilIfEmpty(u.vals),
	}
	if u.cond != "" {
		up.ConditionExpression = &u.cond
	}
	return types.TransactWriteItem{Update: up}
}

func (u update) input() *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:                 &u.table,
		Key:                       u.key,
		UpdateExpression:          &u.expr,
		ExpressionAttributeNames:  names(&u.expr, &u.cond),
		ExpressionAttributeValues: nilIfEmpty(u.vals),
	}
	if u.cond != "" {
		in.ConditionExpression = &u.cond
	}
	return in
}

// put is one PutItem in a transaction.
func put(table string, it item, cond string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                &table,
		Item:                     it,
		ConditionExpression:      &cond,
		ExpressionAttributeNames: names(&cond),
	}}
}

func nilIfEmpty(v vals) vals {
	if len(v) == 0 {
		return nil
	}
	return v
}

// getItem reads one item with a strongly consistent read; a missing item
// is nil.
func (s *Store) getItem(ctx context.Context, table string, key item) (item, error) {
	consistent := true
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: &consistent})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}
