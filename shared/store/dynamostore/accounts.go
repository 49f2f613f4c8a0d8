package dynamostore

import (
	"context"
	"fmt"
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
	seq int64 // entries in the ledger; the last one's number
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
		seq: getN(it, "seq"),
	}
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

// entryItem is the ledger item of e, the seq-th entry of its account.
func entryItem(e domain.LedgerEntry, seq int64) item {
	it := ledgerKey(e.AccountID, seq)
	it["seq"] = num(seq)
	it["kind"] = str(e.Kind)
	it["amount"] = num(e.Amount)
	it["balance"] = num(e.Balance)
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
		Balance:   getN(it, "balance"),
		At:        getTime(it, "at"),
		Note:      getS(it, "note"),
		Seq:       getN(it, "seq"),
	}
}

// movement is what a transaction does to an account read as a: it moves
// amount credits with a ledger entry (when entry is set), and adds
// inFlight and the task counts. Its update is conditioned on a's ledger
// sequence when credits move, so that each entry's balance-after is exact
// and entries are numbered without gaps, whatever runs concurrently.
type movement struct {
	a        account
	entry    *domain.LedgerEntry // Amount, Kind, TaskID, At, Note; nil: no credits move
	inFlight int
	counts   map[task.Status]int
	extra    []string // more conditions, with their values in vals
	vals     vals
}

// items returns the account update and, if credits move, the ledger put;
// balance is the account's balance after them.
func (m movement) items(table string) (items []types.TransactWriteItem, balance int64) {
	v := vals{}
	for k, x := range m.vals {
		v[k] = x
	}
	var set, cond []string
	cond = append(cond, "attribute_exists(#acct)")
	balance = m.a.Credits
	var ledger types.TransactWriteItem
	if m.entry != nil {
		seq := m.a.seq + 1
		balance += m.entry.Amount
		e := *m.entry
		e.AccountID, e.Balance = m.a.ID, balance
		set = append(set, "#credits = :credits", "#seq = :seq")
		cond = append(cond, "#seq = :seq0")
		v[":credits"], v[":seq"], v[":seq0"] = num(balance), num(seq), num(m.a.seq)
		ledger = put(table, entryItem(e, seq), "attribute_not_exists(#sk)")
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
	items = append(items, u.transactItem())
	if m.entry != nil {
		items = append(items, ledger)
	}
	return items, balance
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
		it["seq"] = num(1)
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
	var balance int64
	err := s.retry(ctx, op, func() error {
		a, err := s.readAccount(ctx, op, accountID)
		if err != nil {
			return err
		}
		m := movement{a: a, entry: &domain.LedgerEntry{Kind: domain.EntryGrant, Amount: amount, At: at, Note: note}}
		var items []types.TransactWriteItem
		items, balance = m.items(s.t.Accounts)
		if err := s.transact(ctx, op, items); err != nil {
			return retryOnCondition(err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return balance, nil
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
	found := false
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
				found = true
			case strings.HasPrefix(sk, ledgerPrefix):
				entries = append(entries, decodeEntry(it))
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	return entries, nil
}
