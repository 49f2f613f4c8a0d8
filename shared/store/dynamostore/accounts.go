package dynamostore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// The account item is (acct, "A"); its ledger entries are (acct,
// "L#<seq>") in the same partition, so one query reads them in order.
const (
	accountSort  = "A"
	ledgerPrefix = "L#"
	ledgerEnd    = "L$" // '$' follows '#': every entry's sk is below it
)

// account is the account item as read.
type account struct {
	domain.Account
	last int64 // the stamp of its newest ledger entry (lastStamp)
}

func accountKey(id string) item {
	return item{attrAccount: str(id), attrSort: str(accountSort)}
}

func ledgerKey(accountID string, seq int64) item {
	return item{attrAccount: str(accountID), attrSort: str(fmt.Sprintf("%s%019d", ledgerPrefix, seq))}
}

// countAttr is the account attribute counting its tasks in status st.
func countAttr(st task.Status) string { return "tasks_" + string(st) }

func decodeAccount(it item) account {
	return account{
		Account: domain.Account{
			ID:        getS(it, attrAccount),
			Credits:   getN(it, "credits"),
			InFlight:  int(getN(it, "inFlight")),
			CreatedAt: getTime(it, "createdAt"),
		},
		last: lastStamp(it),
	}
}

// Ledger entries are numbered by stamps, not by a sequence read and
// written back: a movement of credits adds its amount to the balance
// with no read (credits = credits + :amount), sets the account's last to
// its stamp on the condition that last is below it, and puts its entry
// at L#<stamp>. The condition makes the stamps of an account's entries
// grow in the order the writes were applied, though no writer read the
// account: a writer whose stamp is not above the last one applied is
// refused and tries again with a later one. So the entry with stamp
// last holds the balance the account item shows, and each older entry's
// balance-after is the next one's less that one's amount: the readers
// (Ledger, LedgerPage, balanceAfter) derive balances from the account
// item and the entries up to its last, and none is stored. A stamp is
// the real clock in nanoseconds, to the microsecond, with three random
// digits, so that writers of one moment rarely meet; entries written
// before stamps (numbered 1, 2, 3 under a seq condition) sort before
// every stamp and keep their order.

// lastStamp is the stamp of the account item it's newest entry: its last,
// or on an account no stamped write has touched yet, its seq (the number
// of its newest entry then).
func lastStamp(it item) int64 {
	if _, ok := it["last"]; ok {
		return getN(it, "last")
	}
	return getN(it, "seq")
}

// stamp is a new stamp, above after (a last the writer found).
func stamp(after int64) int64 {
	v := time.Now().UnixMicro()*1000 + rand.Int64N(1000)
	return max(v, after+1)
}

// readAccount reads the account, or returns domain.ErrNotFound.
func (s *Store) readAccount(ctx context.Context, op, id string) (account, error) {
	it, err := s.getItem(ctx, s.t.Accounts, accountKey(id))
	if err != nil {
		return account{}, dbErr(op, err)
	}
	if it == nil {
		return account{}, fmt.Errorf("%s: account %s: %w", op, id, domain.ErrNotFound)
	}
	return decodeAccount(it), nil
}

// entryItem is the ledger item of e, stamped seq. Its balance-after is
// not stored: the readers derive it.
func entryItem(e domain.LedgerEntry, seq int64) item {
	it := ledgerKey(e.AccountID, seq)
	it["seq"] = num(seq)
	it["kind"] = str(e.Kind)
	it["amount"] = num(e.Amount)
	it["at"] = num(ms(e.At))
	it["note"] = str(e.Note)
	if e.TaskID != "" {
		it["task"] = str(e.TaskID)
	}
	return it
}

func decodeEntry(it item) domain.LedgerEntry {
	return domain.LedgerEntry{
		AccountID: getS(it, attrAccount),
		TaskID:    getS(it, "task"),
		Kind:      getS(it, "kind"),
		Amount:    getN(it, "amount"),
		At:        getTime(it, "at"),
		Note:      getS(it, "note"),
		Seq:       getN(it, "seq"),
	}
}

// balances sets the balance-after of entries, oldest first, which end
// with the entry the account a read names last: the newest holds a's
// balance. Entries past a's last (applied after a was read) are dropped.
func balances(a account, entries []domain.LedgerEntry) []domain.LedgerEntry {
	for len(entries) > 0 && entries[len(entries)-1].Seq > a.last {
		entries = entries[:len(entries)-1]
	}
	bal := a.Credits
	for i := len(entries) - 1; i >= 0; i-- {
		entries[i].Balance = bal
		bal -= entries[i].Amount
	}
	return entries
}

// balanceAfter is the account's balance right after its entry stamped
// seq: its balance now less the entries applied since.
func (s *Store) balanceAfter(ctx context.Context, op, accountID string, seq int64) (int64, error) {
	a, err := s.readAccount(ctx, op, accountID)
	if err != nil {
		return 0, err
	}
	bal := a.Credits
	if seq >= a.last {
		return bal, nil
	}
	cond := "#acct = :acct AND #sk BETWEEN :from AND :to"
	proj := "#amount"
	consistent := true
	in := &dynamodb.QueryInput{
		TableName:                &s.t.Accounts,
		KeyConditionExpression:   &cond,
		ProjectionExpression:     &proj,
		ExpressionAttributeNames: names(&cond, &proj),
		ExpressionAttributeValues: vals{":acct": str(accountID), ":from": ledgerKey(accountID, seq+1)[attrSort],
			":to": ledgerKey(accountID, a.last)[attrSort]},
		ConsistentRead: &consistent,
	}
	for pages := dynamodb.NewQueryPaginator(s.db, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return 0, dbErr(op, err)
		}
		for _, it := range out.Items {
			bal -= getN(it, "amount")
		}
	}
	return bal, nil
}

// movement is what a transaction does to an account: it moves credits
// with a ledger entry stamped stamp (when entry is set), and adds
// inFlight and the task counts, all with no read of the account. Its
// update is conditioned on the account's last stamp being below stamp
// when credits move (see lastStamp), and on extra.
type movement struct {
	a        account             // only its ID is used
	entry    *domain.LedgerEntry // Amount, Kind, TaskID, At, Note; nil: no credits move
	stamp    int64
	inFlight int
	counts   map[task.Status]int
	extra    []string // more conditions, with their values in vals
	vals     vals
}

// items returns the account update and, if credits move, the ledger put.
func (m movement) items(table string) []types.TransactWriteItem {
	v := vals{}
	for k, x := range m.vals {
		v[k] = x
	}
	var set, cond []string
	cond = append(cond, "attribute_exists(#acct)")
	var ledger types.TransactWriteItem
	if m.entry != nil {
		e := *m.entry
		e.AccountID = m.a.ID
		set = append(set, "#credits = #credits + :amount", "#last = :stamp")
		cond = append(cond, "(attribute_not_exists(#last) OR #last < :stamp)")
		v[":amount"], v[":stamp"] = num(e.Amount), num(m.stamp)
		ledger = put(table, entryItem(e, m.stamp), "attribute_not_exists(#sk)")
	}
	if m.inFlight != 0 {
		set = append(set, "#inFlight = #inFlight + :inFlight")
		v[":inFlight"] = num(m.inFlight)
	}
	for _, st := range task.Statuses {
		if d := m.counts[st]; d != 0 {
			a := countAttr(st)
			set = append(set, fmt.Sprintf("#%s = #%s + :%s", a, a, a))
			v[":"+a] = num(d)
		}
	}
	if d := m.counts[""]; d != 0 { // every task, whatever its status
		set = append(set, "#tasks = #tasks + :tasks")
		v[":tasks"] = num(d)
	}
	cond = append(cond, m.extra...)
	u := update{
		table: table,
		key:   accountKey(m.a.ID),
		expr:  "SET " + strings.Join(set, ", "),
		cond:  strings.Join(cond, " AND "),
		vals:  v,
	}
	items := []types.TransactWriteItem{u.transactItem()}
	if m.entry != nil {
		items = append(items, ledger)
	}
	return items
}

// CreateAccount implements store.Store.
func (s *Store) CreateAccount(ctx context.Context, a domain.Account) error {
	op := "create account " + a.ID
	if a.Credits < 0 {
		return fmt.Errorf("%s: negative opening balance %d", op, a.Credits)
	}
	if err := s.check(op); err != nil {
		return err
	}
	it := accountKey(a.ID)
	it["credits"] = num(a.Credits)
	it["inFlight"] = num(0)
	it["createdAt"] = num(ms(a.CreatedAt))
	it["seq"] = num(0)
	it["tasks"] = num(0)
	for _, st := range task.Statuses {
		it[countAttr(st)] = num(0)
	}
	items := []types.TransactWriteItem{put(s.t.Accounts, it, "attribute_not_exists(#acct)")}
	if a.Credits > 0 {
		it["last"] = num(1)
		e := domain.LedgerEntry{AccountID: a.ID, Kind: domain.EntryGrant, Amount: a.Credits,
			Balance: a.Credits, At: a.CreatedAt, Note: "opening balance"}
		items = append(items, put(s.t.Accounts, entryItem(e, 1), "attribute_not_exists(#sk)"))
	}
	return s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		if _, ok := err.(*conditionError); ok {
			return fmt.Errorf("%s: %w", op, domain.ErrExists)
		}
		return err
	})
}

// Account implements store.Store.
func (s *Store) Account(ctx context.Context, id string) (domain.Account, error) {
	op := "read account " + id
	if err := s.check(op); err != nil {
		return domain.Account{}, err
	}
	a, err := s.readAccount(ctx, op, id)
	return a.Account, err
}

// Grant implements store.Store.
func (s *Store) Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (int64, error) {
	op := fmt.Sprintf("grant %d credits to %s", amount, accountID)
	if amount <= 0 {
		return 0, fmt.Errorf("%s: amount must be positive", op)
	}
	var after, st int64
	err := s.retry(ctx, op, func() error {
		st = stamp(after)
		m := movement{a: account{Account: domain.Account{ID: accountID}}, stamp: st,
			entry: &domain.LedgerEntry{Kind: domain.EntryGrant, Amount: amount, At: at, Note: note}}
		err := s.transact(ctx, op, m.items(s.t.Accounts))
		if _, ok := err.(*conditionError); ok {
			// No account, or a later stamp applied first.
			a, err := s.readAccount(ctx, op, accountID)
			if err != nil {
				return err
			}
			after = a.last
			return errRetry
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	return s.balanceAfter(ctx, op, accountID, st)
}

// retryOnCondition turns a failed condition into errRetry: the items
// changed since they were read.
func retryOnCondition(err error) error {
	if _, ok := err.(*conditionError); ok {
		return errRetry
	}
	return err
}

// Ledger implements store.Store. The account item sorts before its
// entries, and they before anything else in the partition (idempotency
// records), so one strongly consistent query on sk < "L$" reads exactly
// the account and its entries, in order.
func (s *Store) Ledger(ctx context.Context, accountID string) ([]domain.LedgerEntry, error) {
	op := "read ledger of " + accountID
	if err := s.check(op); err != nil {
		return nil, err
	}
	var entries []domain.LedgerEntry
	var a *account
	cond := "#acct = :acct AND #sk < :end"
	consistent := true
	in := &dynamodb.QueryInput{
		TableName:                 &s.t.Accounts,
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names(&cond),
		ExpressionAttributeValues: vals{":acct": str(accountID), ":end": str(ledgerEnd)},
		ConsistentRead:            &consistent,
	}
	for pages := dynamodb.NewQueryPaginator(s.db, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, dbErr(op, err)
		}
		for _, it := range out.Items {
			switch sk := getS(it, attrSort); {
			case sk == accountSort:
				acct := decodeAccount(it)
				a = &acct
			case strings.HasPrefix(sk, ledgerPrefix):
				entries = append(entries, decodeEntry(it))
			}
		}
	}
	if a == nil {
		return nil, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	// The account item sorts first, so it was read before any entry:
	// entries past its last were applied after, and are left out.
	return balances(*a, entries), nil
}
