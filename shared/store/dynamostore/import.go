package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// importWriters is how many BatchWriteItem calls ImportTasks keeps going.
const importWriters = 8

// ImportTasks writes n tasks (next returns the i-th) as they are, 25 to a
// BatchWriteItem, then adds them to their accounts' counts: none of a
// start's checks or books (no charge, no ledger entry, no in-flight slot,
// no ttl). It exists for `make bench` (infra/bench) to seed an account on
// DynamoDB Local in seconds rather than through a transaction per start;
// nothing in the service calls it. Counts are added once every task is
// written, so a history read meanwhile may list a task its total does not
// count yet.
func (s *Store) ImportTasks(ctx context.Context, n int, next func(i int) task.Task) error {
	op := fmt.Sprintf("import %d tasks", n)
	if err := s.check(op); err != nil {
		return err
	}
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, importWriters)
	var wg sync.WaitGroup
	for range importWriters {
		wg.Go(func() {
			for batch := range batches {
				for len(batch) > 0 {
					out, err := s.admin.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
						RequestItems: map[string][]types.WriteRequest{s.t.Tasks: batch}})
					if err != nil {
						errs <- fmt.Errorf("%s: %w", op, err)
						for range batches { // let the producer finish
						}
						return
					}
					batch = out.UnprocessedItems[s.t.Tasks]
				}
			}
		})
	}
	counts := map[string]map[task.Status]int{}
	var batch []types.WriteRequest
	var err error
	for i := range n {
		t := next(i)
		it, e := encodeTask(t)
		if e != nil {
			err = fmt.Errorf("%s: task %s: %w", op, t.ID, e)
			break
		}
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		if counts[t.AccountID] == nil {
			counts[t.AccountID] = map[task.Status]int{}
		}
		counts[t.AccountID][t.Status]++
		counts[t.AccountID][""]++
		if len(batch) == 25 || i == n-1 {
			batches <- batch
			batch = nil
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	if err != nil {
		return err
	}
	for acct, c := range counts {
		items := movement{a: account{Account: domain.Account{ID: acct}}, counts: c}.items(s.t.Accounts)
		if err := s.transact(ctx, op, items); err != nil {
			return fmt.Errorf("%s: count them on %s: %w", op, acct, err)
		}
	}
	return nil
}
