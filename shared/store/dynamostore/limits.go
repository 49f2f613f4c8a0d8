package dynamostore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
)

// A counter item is (key) with its count, the end of its window
// (expiresAt, unix ms) and ttl (unix seconds), for DynamoDB's TTL to
// delete it some time after. Correctness never depends on that deletion:
// a window whose expiresAt is at or before the time of a Take is replaced
// by a fresh one, whether or not its item is still there.
//
// TTL runs on AWS's clock, while windows are in the caller's: ttl is when
// the window has surely ended on the real clock, now plus what is left of
// the window at the caller's time plus ttlGrace, so that no skew between
// the clocks (nor a caller replaying old times, as tests do) makes TTL
// delete a window still counting.
const ttlGrace = time.Hour

func counterKey(key string) item { return item{attrCounterPK: str(key)} }

// readTally is the tally of the counter item it as read: the zero
// lifecycle.Tally when there is none.
func readTally(it item) lifecycle.Tally {
	if it == nil {
		return lifecycle.Tally{}
	}
	return lifecycle.Tally{Count: int(getN(it, "count")), Ends: getTime(it, "expiresAt")}
}

// ttl is the TTL, in unix seconds rounded up, of a window (or an
// idempotency record) ending at expires, written at the caller's time at.
func (s *Store) ttl(expires, at time.Time) int64 {
	end := s.now().Add(max(expires.Sub(at), 0) + ttlGrace)
	return (ms(end) + 999) / 1000
}

// increment adds one to an open window, if it is below limit.
func (s *Store) increment(c domain.Window, at time.Time) update {
	return update{
		table: s.t.Counters,
		key:   counterKey(c.Key),
		expr:  "SET #count = #count + :one",
		cond:  "#expiresAt > :at AND #count < :limit",
		vals:  vals{":one": num(1), ":at": num(ms(at)), ":limit": num(c.Limit)},
	}
}

// addTo adds n to c's window with no read: to the open window if it
// stays within the limit, or as a fresh window at n when there is none
// (a window's key names its start, so its item holds that window only).
// A window that ended under the same key fails the condition, and the
// start's read decides it (lifecycle.Add: opened afresh, restart).
func (s *Store) addTo(c domain.Window, at time.Time, n int) update {
	return update{
		table: s.t.Counters,
		key:   counterKey(c.Key),
		expr:  "SET #count = if_not_exists(#count, :zero) + :n, #expiresAt = if_not_exists(#expiresAt, :expires), #ttl = if_not_exists(#ttl, :ttl)",
		cond:  "attribute_not_exists(#count) OR (#expiresAt > :at AND #count <= :room)",
		vals: vals{":zero": num(0), ":n": num(n), ":expires": num(ms(c.ExpiresAt)),
			":ttl": num(s.ttl(c.ExpiresAt, at)), ":at": num(ms(at)), ":room": num(c.Limit - n)},
	}
}

// restart opens a fresh window at count, if none is open.
func (s *Store) restart(c domain.Window, at time.Time, count int) update {
	return update{
		table: s.t.Counters,
		key:   counterKey(c.Key),
		expr:  "SET #count = :count, #expiresAt = :expires, #ttl = :ttl",
		cond:  "attribute_not_exists(#key) OR #expiresAt <= :at",
		vals: vals{":count": num(count), ":expires": num(ms(c.ExpiresAt)),
			":ttl": num(s.ttl(c.ExpiresAt, at)), ":at": num(ms(at))},
	}
}

// spend adds n credits to c, a spending cap's window, as tk (the
// lifecycle's decision) says: a fresh window opens at n; an open one is
// added to if it stays within the cap.
func (s *Store) spend(c domain.Window, at time.Time, tk lifecycle.Taken, n int) update {
	if tk.Fresh {
		return s.restart(c, at, tk.Tally.Count)
	}
	return update{
		table: s.t.Counters,
		key:   counterKey(c.Key),
		expr:  "SET #count = #count + :n",
		cond:  "#expiresAt > :at AND #count <= :room",
		vals:  vals{":n": num(n), ":at": num(ms(at)), ":room": num(c.Limit - n)},
	}
}

// Take implements store.Store.
func (s *Store) Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error) {
	keys := make([]string, len(counters))
	for i, c := range counters {
		keys[i] = c.Key
	}
	op := "take " + strings.Join(keys, ", ")
	switch len(counters) {
	case 0:
		return []int{}, s.check(op)
	case 1:
		n, _, err := s.takeOne(ctx, op, counters[0], at)
		if err != nil {
			return nil, err
		}
		return []int{n}, nil
	}
	return s.takeMany(ctx, op, counters, at)
}

// takeOne takes from one counter with single conditional updates, which
// need no read and do not contend: an increment of the open window that
// returns the new count, or when there is none a fresh window at 1. It
// returns the count and the end of the window it counted in.
func (s *Store) takeOne(ctx context.Context, op string, c domain.Window, at time.Time) (int, time.Time, error) {
	var (
		used int
		ends time.Time
	)
	err := s.retry(ctx, op, func() error {
		in := s.increment(c, at).input()
		in.ReturnValues = types.ReturnValueAllNew
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		out, err := s.db.UpdateItem(ctx, in)
		if err == nil {
			w := readTally(out.Attributes)
			used, ends = w.Count, w.Ends
			return nil
		}
		old, ok := conditionFailed(err)
		if !ok {
			return dbErr(op, err)
		}
		// The increment found no open window below the limit: decide on
		// the window it found.
		tk, err := lifecycle.Take(c, readTally(old), at)
		if err != nil {
			return err
		}
		if !tk.Fresh {
			return errRetry // it was reopened in between
		}
		if _, err := s.db.UpdateItem(ctx, s.restart(c, at, tk.Tally.Count).input()); err != nil {
			if _, ok := conditionFailed(err); ok {
				return errRetry // someone else opened it: increment that
			}
			return dbErr(op, err)
		}
		used, ends = tk.Tally.Count, c.ExpiresAt
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return used, ends, nil
}

// takeMany takes from several counters one after another, each as
// takeOne does: no read and no transaction. A burst of requests on one
// key (its minute and day windows) then adds up, where reading the
// windows and writing them back on the condition that they had not
// changed made each request lose to every one that wrote first (on the
// order of n² attempts for n at once), and a transaction on those hot
// items would conflict with every other under way on them. When a
// counter refuses, what the earlier ones took is given back before the
// refusal is returned, so the counts settle exact; in between, a
// concurrent Take may find one unit more used than will stay.
func (s *Store) takeMany(ctx context.Context, op string, counters []domain.Window, at time.Time) ([]int, error) {
	used := make([]int, len(counters))
	ends := make([]time.Time, len(counters))
	for i, c := range counters {
		n, end, err := s.takeOne(ctx, op, c, at)
		if err != nil {
			s.untake(ctx, op, counters[:i], ends[:i])
			return nil, err
		}
		used[i], ends[i] = n, end
	}
	return used, nil
}

// untake takes one unit back from each of counters, in the window that
// ended at the matching ends (the one it was taken from): a window
// replaced since holds nothing of it. A unit that cannot be given back
// stays counted, so the key loses one request of that window, never
// gains one.
func (s *Store) untake(ctx context.Context, op string, counters []domain.Window, ends []time.Time) {
	// A fresh context: the request's may be what refused.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveBudget)
	defer cancel()
	for i, c := range counters {
		u := update{
			table: s.t.Counters,
			key:   counterKey(c.Key),
			expr:  "SET #count = #count - :one",
			cond:  "#expiresAt = :ends AND #count > :zero",
			vals:  vals{":one": num(1), ":zero": num(0), ":ends": num(ms(ends[i]))},
		}
		if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
			if _, ok := conditionFailed(err); !ok {
				slog.Warn("a request counted in a window could not be given back", "op", op, "counter", c.Key, "err", err.Error())
			}
		}
	}
}

// batchGet reads the items of keys, by table (at most 100 in all), with
// strongly consistent reads, asking again for any DynamoDB left
// unprocessed. Missing items are left out.
func (s *Store) batchGet(ctx context.Context, keys map[string][]item) (map[string][]item, error) {
	consistent := true
	req := map[string]types.KeysAndAttributes{}
	for table, k := range keys {
		if len(k) > 0 {
			req[table] = types.KeysAndAttributes{Keys: k, ConsistentRead: &consistent}
		}
	}
	items := map[string][]item{}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt == 10 {
			return nil, fmt.Errorf("batch read: keys still unprocessed after %d attempts: %w", attempt, errThrottled)
		}
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
			}
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, err
		}
		for table, its := range out.Responses {
			items[table] = append(items[table], its...)
		}
		req = out.UnprocessedKeys
	}
	return items, nil
}

// Count returns the count of c's window at at, 0 when there is none or it
// has ended, with one eventually consistent read: what a function that
// leaves the counting to API Gateway's usage plan reports in its
// X-RateLimit headers.
func (s *Store) Count(ctx context.Context, c domain.Window, at time.Time) (int, error) {
	op := "read counter " + c.Key
	if err := s.check(op); err != nil {
		return 0, err
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.Counters, Key: counterKey(c.Key)})
	if err != nil {
		return 0, dbErr(op, err)
	}
	if w := readTally(out.Item); w.Open(at) {
		return w.Count, nil
	}
	return 0, nil
}
