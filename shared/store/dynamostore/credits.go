package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// LedgerPage implements store.Store: a read of the account item, whose
// balance and last stamp the entries' balances are derived from (see
// lastStamp), then one strongly consistent query of the account's
// partition backwards from its last entry. The entries newer than the
// page are read for their amounts, to derive the page's balances: a page
// deep in a busy ledger costs what the entries above it cost to read.
func (s *Store) LedgerPage(ctx context.Context, accountID string, q store.LedgerQuery) ([]domain.LedgerEntry, error) {
	op := "read ledger page of " + accountID
	if err := s.check(op); err != nil {
		return nil, err
	}
	a, err := s.readAccount(ctx, op, accountID)
	if err != nil {
		return nil, err
	}
	cond := "#acct = :acct AND #sk BETWEEN :first AND :upper"
	consistent, backward := true, false
	in := &dynamodb.QueryInput{
		TableName:                &s.t.Accounts,
		KeyConditionExpression:   &cond,
		ExpressionAttributeNames: names(&cond),
		ExpressionAttributeValues: vals{":acct": str(accountID), ":first": str(ledgerPrefix),
			":upper": ledgerKey(accountID, a.last)[attrSort]},
		ConsistentRead:   &consistent,
		ScanIndexForward: &backward,
	}
	var entries []domain.LedgerEntry
	bal := a.Credits
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, dbErr(op, err)
		}
		for _, it := range out.Items {
			e := decodeEntry(it)
			e.Balance = bal
			bal -= e.Amount
			if q.Before <= 0 || e.Seq < q.Before {
				entries = append(entries, e)
			}
			if q.Limit > 0 && len(entries) == q.Limit {
				return entries, nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return entries, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Held implements store.Store, from the status index: it reads only the
// account's tasks pending and processing, which the in-flight limit keeps
// few. The index is updated shortly after each write, like history.
func (s *Store) Held(ctx context.Context, accountID string) (int64, error) {
	op := "read credits held by " + accountID
	if err := s.check(op); err != nil {
		return 0, err
	}
	var held int64
	for _, st := range []task.Status{task.Pending, task.Processing} {
		items, err := s.queryAll(ctx, s.t.Tasks, indexStatus, attrAcctStatus, accountID+"#"+string(st))
		if err != nil {
			return 0, dbErr(op, err)
		}
		for _, it := range items {
			held += getN(it, "cost") - getN(it, "refunded")
		}
	}
	return held, nil
}

// DeleteTask implements store.Store: the task item is deleted on the
// condition that its status is still the terminal one read, in one
// transaction with the account's task counts (history's totals).
func (s *Store) DeleteTask(ctx context.Context, id string) (task.Task, error) {
	op := "delete task " + id
	if err := s.check(op); err != nil {
		return task.Task{}, err
	}
	var t task.Task
	err := s.retry(ctx, op, func() error {
		var err error
		if t, err = s.readTask(ctx, op, id); err != nil {
			return err
		}
		if err := lifecycle.Delete(t); err != nil {
			return err
		}
		cond := "#status = :status"
		del := types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 &s.t.Tasks,
			Key:                       taskKey(id),
			ConditionExpression:       &cond,
			ExpressionAttributeNames:  names(&cond),
			ExpressionAttributeValues: vals{":status": str(string(t.Status))},
		}}
		m := movement{
			a:      account{Account: domain.Account{ID: t.AccountID}},
			counts: map[task.Status]int{t.Status: -1, "": -1},
		}
		acct := m.items(s.t.Accounts)
		return retryOnCondition(s.transact(ctx, op, append([]types.TransactWriteItem{del}, acct...)))
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}
