package dynamostore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// A task goes away by DynamoDB's TTL with its videos; the history's
// totals are counters on the account, which TTL does not touch. The
// stream of the tasks table reports each TTL deletion (a REMOVE whose
// userIdentity is the DynamoDB service), and ForgetExpiredTask takes the
// task out of the counters, as DeleteTask does in its transaction, so
// that total and skip keep matching what history can list.

// expiredPrefix begins the sort key of the marker of an expired task in
// its account's partition ("X#<task id>"): it sorts after "L$", so the
// ledger's query never reads it, and it has its own ttl.
const expiredPrefix = "X#"

// expiredMarkerLife is how long a marker is kept: longer than a stream
// keeps its records (24 hours), so that a record delivered again finds it.
const expiredMarkerLife = 48 * time.Hour

// ForgetExpiredTask takes a task that DynamoDB's TTL deleted out of its
// account's counts (the total and its status's), once: the marker
// X#<task id>, written in the same transaction on the condition that it is
// not there, makes a second delivery of the stream record change nothing.
// An account that no longer exists has nothing to forget.
func (s *Store) ForgetExpiredTask(ctx context.Context, accountID, taskID string, status task.Status) error {
	op := "forget expired task " + taskID
	return s.retry(ctx, op, func() error {
		now := s.now()
		marker := item{attrAccount: str(accountID), attrSort: str(expiredPrefix + taskID),
			attrTTL: num(now.Add(expiredMarkerLife).Unix())}
		m := movement{a: account{Account: domain.Account{ID: accountID}}, counts: map[task.Status]int{status: -1, "": -1}}
		acct := m.items(s.t.Accounts)
		err := s.transact(ctx, op, append([]types.TransactWriteItem{put(s.t.Accounts, marker, "attribute_not_exists(#sk)")}, acct...))
		var ce *conditionError
		if errors.As(err, &ce) {
			return nil // forgotten already (the marker), or no such account
		}
		return err
	})
}
