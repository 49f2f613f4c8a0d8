package dynamostore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// A task item is (id) with the task's fields; params, inputs, videos and
// failure are JSON text, in the encoding the API uses. Three attributes
// place it in the indexes, all sorted by hist ("<created ms, 15
// digits>#<id>", so that newest first is descending order):
//   - acct: the history index, every task of an account;
//   - acctStatus ("<acct>#<status>"): the status index;
//   - unfinished (the account id), present only while the task is pending
//     or processing: the sparse unfinished index.

// createTaskIndex is the place of the task's put in CreateTask's
// transaction: after the account update and the ledger entry.
const createTaskIndex = 2

func taskKey(id string) item { return item{attrTaskPK: str(id)} }

// histKey is a task's sort key in the history and status indexes: newest
// last by the millisecond, then by id.
func histKey(created time.Time, id string) string { return sortable(ms(created)) + "#" + id }

func encodeTask(t task.Task) (item, error) {
	it := taskKey(t.ID)
	it[attrAccount] = str(t.AccountID)
	it["keyName"] = str(t.KeyName)
	if t.KeyID != "" {
		it["keyId"] = str(t.KeyID)
	}
	it["type"] = str(t.Type)
	it["model"] = str(t.Model)
	it["prompt"] = str(t.Prompt)
	params, err := json.Marshal(t.Params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	it["params"] = str(string(params))
	if len(t.Inputs) > 0 {
		b, err := json.Marshal(t.Inputs)
		if err != nil {
			return nil, fmt.Errorf("encode inputs: %w", err)
		}
		it["inputs"] = str(string(b))
	}
	it["cost"] = num(t.CreditsCost)
	it["refunded"] = num(t.CreditsRefunded)
	it["createdAt"] = num(ms(t.CreatedAt))
	putTime(it, "startedAt", t.StartedAt)
	putTime(it, "completedAt", t.CompletedAt)
	putTime(it, "deadline", t.Deadline)
	if t.Operation != "" {
		it["operation"] = str(t.Operation)
	}
	if t.WebhookURL != "" {
		it["webhookUrl"] = str(t.WebhookURL)
	}
	if t.Progress != 0 {
		it["progress"] = num(t.Progress)
	}
	for k, v := range billingAttrs(t.Billing) {
		it[k] = v
	}
	// A start has neither; a finished task written whole (ImportTasks)
	// has one.
	if len(t.Videos) > 0 {
		b, err := json.Marshal(t.Videos)
		if err != nil {
			return nil, fmt.Errorf("encode videos: %w", err)
		}
		it["videos"] = str(string(b))
	}
	if t.Failure != nil {
		b, err := json.Marshal(t.Failure)
		if err != nil {
			return nil, fmt.Errorf("encode failure: %w", err)
		}
		it["failure"] = str(string(b))
	}
	it[attrHist] = str(histKey(t.CreatedAt, t.ID))
	for k, v := range statusAttrs(t) {
		it[k] = v
	}
	return it, nil
}

// billingAttrs are the attributes of a completed task's billing
// (task.Billing), none for an empty one.
func billingAttrs(b task.Billing) item {
	it := item{}
	if b.Route != "" {
		it["route"] = str(b.Route)
	}
	if b.ProviderModel != "" {
		it["providerModel"] = str(b.ProviderModel)
	}
	if b.CostUSD != 0 {
		it["providerCostUsd"] = &types.AttributeValueMemberN{Value: strconv.FormatFloat(b.CostUSD, 'g', -1, 64)}
	}
	return it
}

// statusAttrs are the attributes that follow the status: the status, its
// index key, and the unfinished index key while the task is not terminal.
func statusAttrs(t task.Task) item {
	it := item{"status": str(string(t.Status)), attrAcctStatus: str(t.AccountID + "#" + string(t.Status))}
	if !t.Status.Terminal() {
		it[attrUnfinished] = str(t.AccountID)
	}
	return it
}

func decodeTask(it item) (task.Task, error) {
	t := task.Task{
		ID:              getS(it, attrTaskPK),
		AccountID:       getS(it, attrAccount),
		KeyName:         getS(it, "keyName"),
		KeyID:           getS(it, "keyId"),
		Type:            getS(it, "type"),
		Model:           getS(it, "model"),
		Prompt:          getS(it, "prompt"),
		CreditsCost:     int(getN(it, "cost")),
		CreditsRefunded: int(getN(it, "refunded")),
		Status:          task.Status(getS(it, "status")),
		CreatedAt:       getTime(it, "createdAt"),
		StartedAt:       getTime(it, "startedAt"),
		CompletedAt:     getTime(it, "completedAt"),
		Deadline:        getTime(it, "deadline"),
		Operation:       getS(it, "operation"),
		WebhookURL:      getS(it, "webhookUrl"),
		Progress:        int(getN(it, "progress")),
		Billing: task.Billing{Route: getS(it, "route"), ProviderModel: getS(it, "providerModel"),
			CostUSD: getF(it, "providerCostUsd")},
	}
	if err := json.Unmarshal([]byte(getS(it, "params")), &t.Params); err != nil {
		return task.Task{}, fmt.Errorf("decode params of %s: %w", t.ID, err)
	}
	if v := getS(it, "inputs"); v != "" {
		if err := json.Unmarshal([]byte(v), &t.Inputs); err != nil {
			return task.Task{}, fmt.Errorf("decode inputs of %s: %w", t.ID, err)
		}
	}
	if v := getS(it, "videos"); v != "" {
		if err := json.Unmarshal([]byte(v), &t.Videos); err != nil {
			return task.Task{}, fmt.Errorf("decode videos of %s: %w", t.ID, err)
		}
	}
	if v := getS(it, "failure"); v != "" {
		t.Failure = new(task.Failure)
		if err := json.Unmarshal([]byte(v), t.Failure); err != nil {
			return task.Task{}, fmt.Errorf("decode failure of %s: %w", t.ID, err)
		}
	}
	return t, nil
}

// CreateTask implements store.Store. A start is one transaction that
// needs no read first: the account's balance and in-flight count move
// by conditional additions (credits >= :cost, inFlight < :max), the
// charge is an entry stamped as every movement is (see lastStamp), the
// windows of the key's Starts counter and spending caps are conditional
// additions to the items of their window, and the idempotency record is
// put if there is none live. So a burst of starts on one account does
// not have each start read the account and lose to the one that wrote
// it first: their writes add up. Only a transaction whose condition
// fails reads, to tell the refusal (lifecycle.Create decides it on what
// was read, as before) from a change in between (a window that ended, a
// later stamp applied first), which it writes again. A transaction whose
// reply is lost is resolved before CreateTask returns (commitCreate): it
// returns nil when the task was written, and store.ErrOutcomeUnknown
// only when DynamoDB could not say. The balance it returns is the
// account's right after the charge, derived from the ledger; the
// spending caps' windows, which the transaction added to without
// reading, are read after it (one batch read, and only when a cap is in
// force), so they may hold a concurrent start's charge too.
func (s *Store) CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (domain.Charged, error) {
	op := fmt.Sprintf("create task %s for %s", t.ID, t.AccountID)
	t, err := lifecycle.Prepare(t, g)
	if err != nil {
		return domain.Charged{}, fmt.Errorf("%s: %w", op, err)
	}
	taskItem, err := encodeTask(t)
	if err != nil {
		return domain.Charged{}, fmt.Errorf("%s: %w", op, err)
	}
	if s.keep > 0 {
		// On the real clock, like every TTL (Store.ttl), and never
		// before the task could have ended.
		taskItem[attrTTL] = num(s.ttl(t.CreatedAt.Add(s.keep), t.CreatedAt))
	}

	var (
		decided *lifecycle.Start // what a read decided; nil: none yet
		after   int64            // the account's last stamp, as read
		charge  int64            // the stamp of the charge written
	)
	// A window the start's units cannot fit in even empty is refused
	// by the read's decision, never tried.
	if g.Starts != nil && g.Starts.Limit < 1 {
		decided, after, err = s.decideStart(ctx, op, t, g)
		if err != nil {
			return domain.Charged{}, err
		}
	}
	for _, c := range g.Spend {
		if decided == nil && c.Limit < t.CreditsCost {
			if decided, after, err = s.decideStart(ctx, op, t, g); err != nil {
				return domain.Charged{}, err
			}
		}
	}
	err = s.retry(ctx, op, func() error {
		charge = stamp(after)
		items := s.startItems(t, g, taskItem, decided, charge)
		err := s.commitCreate(ctx, op, t, items, createToken(), charge)
		if _, ok := err.(*conditionError); ok {
			// Refused, or something changed since: read, and let the
			// lifecycle say which.
			if decided, after, err = s.decideStart(ctx, op, t, g); err != nil {
				return err
			}
			return errRetry
		}
		return err
	})
	if err != nil {
		return domain.Charged{}, err
	}
	// The task is written and charged: the balance is what the answer
	// shows, and a failure to read it must not turn the start into an
	// error. A fresh context: the request's may be over.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveBudget)
	defer cancel()
	var charged domain.Charged
	if charged.Balance, err = s.balanceAfter(rctx, op, t.AccountID, charge); err != nil {
		slog.Warn("a start was charged, its balance after could not be read", "task", t.ID, "err", err)
	}
	if domain.Capped(g.Spend) {
		if charged.Spent, err = s.spentAfter(rctx, g.Spend); err != nil {
			slog.Warn("a start was charged, its spending caps after could not be read", "task", t.ID, "err", err)
		}
	}
	return charged, nil
}

// spentAfter reads what each of windows holds, in order, with one
// strongly consistent batch read.
func (s *Store) spentAfter(ctx context.Context, windows []domain.Window) ([]int64, error) {
	keys := make([]item, 0, len(windows))
	for _, w := range windows {
		keys = append(keys, counterKey(w.Key))
	}
	got, err := s.batchGet(ctx, map[string][]item{s.t.Counters: keys})
	if err != nil {
		return nil, err
	}
	held := map[string]int64{}
	for _, it := range got[s.t.Counters] {
		held[getS(it, attrCounterPK)] = int64(readTally(it).Count)
	}
	spent := make([]int64, len(windows))
	for i, w := range windows {
		spent[i] = held[w.Key]
	}
	return spent, nil
}

// decideStart reads what lifecycle.Create decides the start of t on (the
// account, the task's id, the idempotency record, the windows) with one
// batch read, and returns its decision and the account's last stamp, or
// its refusal.
func (s *Store) decideStart(ctx context.Context, op string, t task.Task, g domain.StartGuard) (*lifecycle.Start, int64, error) {
	keys := map[string][]item{
		s.t.Accounts: {accountKey(t.AccountID)},
		s.t.Tasks:    {taskKey(t.ID)},
	}
	if g.Idempotency != nil {
		keys[s.t.Accounts] = append(keys[s.t.Accounts], recordKey(t.AccountID, g.Idempotency.Key))
	}
	if g.Starts != nil {
		keys[s.t.Counters] = []item{counterKey(g.Starts.Key)}
	}
	for _, c := range g.Spend {
		keys[s.t.Counters] = append(keys[s.t.Counters], counterKey(c.Key))
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, 0, dbErr(op, err)
	}
	var acct, rec item
	for _, it := range got[s.t.Accounts] {
		if getS(it, attrSort) == accountSort {
			acct = it
		} else {
			rec = it
		}
	}
	var a account
	found := lifecycle.Found{TaskExists: len(got[s.t.Tasks]) > 0}
	if acct != nil {
		a = decodeAccount(acct)
		found.Account = &a.Account
	}
	if rec != nil {
		r := decodeRecord(rec)
		found.Record = &r
	}
	counters := map[string]item{}
	for _, it := range got[s.t.Counters] {
		counters[getS(it, attrCounterPK)] = it
	}
	if g.Starts != nil {
		found.Starts = readTally(counters[g.Starts.Key])
	}
	for _, c := range g.Spend {
		found.Spend = append(found.Spend, readTally(counters[c.Key]))
	}
	start, err := lifecycle.Create(t, g, found)
	if err != nil {
		return nil, 0, s.replayBalance(ctx, op, rec, err)
	}
	return &start, a.last, nil
}

// startItems is the transaction of the start of t, its charge stamped
// charge: 0. the account, 1. the charge, 2. the task (createTaskIndex),
// then the Starts window, the spending caps' windows and the
// idempotency record. A window that decided (a read's decision) says
// ended is opened afresh; any other is added to.
func (s *Store) startItems(t task.Task, g domain.StartGuard, taskItem item, decided *lifecycle.Start, charge int64) []types.TransactWriteItem {
	cost := int64(t.CreditsCost)
	m := movement{
		a:        account{Account: domain.Account{ID: t.AccountID}},
		entry:    &domain.LedgerEntry{TaskID: t.ID, Kind: domain.EntryCharge, Amount: -cost, At: t.CreatedAt, Note: t.Model},
		stamp:    charge,
		inFlight: 1,
		counts:   map[task.Status]int{"": 1, task.Pending: 1},
		extra:    []string{"#credits >= :cost"},
		vals:     vals{":cost": num(cost)},
	}
	if g.MaxInFlight > 0 {
		m.extra = append(m.extra, "#inFlight < :max")
		m.vals[":max"] = num(g.MaxInFlight)
	}
	items := m.items(s.t.Accounts)
	items = append(items, put(s.t.Tasks, taskItem, "attribute_not_exists(#id)"))
	if g.Starts != nil {
		u := s.addTo(*g.Starts, t.CreatedAt, 1)
		if decided != nil && decided.Starts != nil && decided.Starts.Fresh {
			u = s.restart(*g.Starts, t.CreatedAt, decided.Starts.Tally.Count)
		}
		items = append(items, u.transactItem())
	}
	for i, c := range g.Spend {
		u := s.addTo(c, t.CreatedAt, t.CreditsCost)
		if decided != nil && i < len(decided.Spend) && decided.Spend[i].Fresh {
			u = s.restart(c, t.CreatedAt, decided.Spend[i].Tally.Count)
		}
		items = append(items, u.transactItem())
	}
	if k := g.Idempotency; k != nil {
		items = append(items, s.putRecord(t, *k, charge))
	}
	return items
}

// An idempotency record is (acct, "R#<key>") in the accounts table, next
// to the account it is scoped to, with the task it started (task), the
// request's hash (requestHash), the balance the start left (balance), the
// end of its life (expiresAt, unix ms) and a ttl for DynamoDB's TTL to
// delete it later (see Store.ttl). Its sort key sorts after every ledger
// entry, so that ledger queries stop short of it.
const recordPrefix = "R#"

func recordKey(accountID, key string) item {
	return item{attrAccount: str(accountID), attrSort: str(recordPrefix + key)}
}

// decodeRecord decodes the idempotency record rec.
func decodeRecord(rec item) lifecycle.Record {
	return lifecycle.Record{
		TaskID:      getS(rec, "task"),
		RequestHash: getS(rec, "requestHash"),
		ExpiresAt:   getTime(rec, "expiresAt"),
		Balance:     getN(rec, "balance"),
	}
}

// replayBalance fills in the Balance of an *domain.IdempotencyError made
// from rec: the balance right after its start's charge, derived from the
// ledger (balanceAfter) at the charge's stamp, which the record keeps.
// A record written before records kept the stamp holds the balance
// itself, and one written before that has its charge found in the ledger
// (such records are gone a day after; this is their bridge).
func (s *Store) replayBalance(ctx context.Context, op string, rec item, err error) error {
	var ie *domain.IdempotencyError
	if !errors.As(err, &ie) {
		return err
	}
	if _, ok := rec["balance"]; ok {
		return err
	}
	acct := getS(rec, attrAccount)
	charge := getN(rec, "charge")
	if _, ok := rec["charge"]; !ok {
		cond := "#acct = :acct AND #sk < :end"
		filter := "#task = :task AND #kind = :kind"
		consistent := true
		in := &dynamodb.QueryInput{
			TableName:                &s.t.Accounts,
			KeyConditionExpression:   &cond,
			FilterExpression:         &filter,
			ExpressionAttributeNames: names(&cond, &filter),
			ExpressionAttributeValues: vals{":acct": str(acct), ":end": str(ledgerEnd),
				":task": str(ie.TaskID), ":kind": str(domain.EntryCharge)},
			ConsistentRead: &consistent,
		}
		found := false
		for pages := dynamodb.NewQueryPaginator(s.db, in); pages.HasMorePages() && !found; {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return dbErr(op, fmt.Errorf("find the charge of %s: %w", ie.TaskID, err))
			}
			if len(out.Items) > 0 {
				charge, found = getN(out.Items[0], "seq"), true
			}
		}
		if !found {
			return fmt.Errorf("%s: task %s of an idempotency record has no charge", op, ie.TaskID)
		}
	}
	b, berr := s.balanceAfter(ctx, op, acct, charge)
	if berr != nil {
		return berr
	}
	ie.Balance = b
	return ie
}

// putRecord is the put of the record of k written by t's start, whose
// charge is stamped charge: if the account holds no live record of the
// key (none, one expired at t's creation, or one naming the task k
// replaces), as lifecycle.Claim has it, so that of two starts racing for
// a key only one writes it, and with no read. The record keeps the
// charge's stamp, from which a replay derives the balance the start
// left (balanceAfter).
func (s *Store) putRecord(t task.Task, k domain.IdempotencyKey, charge int64) types.TransactWriteItem {
	cond := "attribute_not_exists(#sk) OR #expiresAt <= :created"
	v := vals{":created": num(ms(t.CreatedAt))}
	if k.Replaces != "" {
		cond += " OR #task = :replaces"
		v[":replaces"] = str(k.Replaces)
	}
	it := recordKey(t.AccountID, k.Key)
	it["task"] = str(t.ID)
	it["requestHash"] = str(k.RequestHash)
	it["charge"] = num(charge)
	it["expiresAt"] = num(ms(k.ExpiresAt))
	it[attrTTL] = num(s.ttl(k.ExpiresAt, t.CreatedAt))
	p := put(s.t.Accounts, it, cond)
	p.Put.ExpressionAttributeValues = v
	return p
}

// readTask reads task id with a strongly consistent read.
func (s *Store) readTask(ctx context.Context, op, id string) (task.Task, error) {
	it, err := s.getItem(ctx, s.t.Tasks, taskKey(id))
	if err != nil {
		return task.Task{}, dbErr(op, err)
	}
	if it == nil {
		return task.Task{}, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	t, err := decodeTask(it)
	if err != nil {
		return task.Task{}, fmt.Errorf("%s: %w", op, err)
	}
	return t, nil
}

// Task implements store.Store.
func (s *Store) Task(ctx context.Context, id string) (task.Task, error) {
	op := "read task " + id
	if err := s.check(op); err != nil {
		return task.Task{}, err
	}
	return s.readTask(ctx, op, id)
}

// maxQueryLimit bounds the Limit of one query; DynamoDB also stops each
// page at 1 MB.
const maxQueryLimit = 1000

// Tasks implements store.Store. A Limit of 0 or less means no limit.
//
// The total comes from the counts kept on the account item, so it costs
// one read whatever the account holds. The page is a query of the
// history index (or of the status index, for a status) newest first;
// the skipped tasks are stepped over with COUNT queries, which return no
// items but still read them: a page costs what skip+limit tasks cost to
// read. With q.After the query starts at the cursor instead (a key
// condition on the index's sort key), so a page costs what limit tasks
// cost however deep it is. Indexes are updated shortly after each write, so a task created
// or moved a moment ago may be counted in the total before it shows in a
// page.
func (s *Store) Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error) {
	op := "list tasks of " + accountID
	if err := s.check(op); err != nil {
		return nil, 0, err
	}
	acct, err := s.getItem(ctx, s.t.Accounts, accountKey(accountID))
	if err != nil {
		return nil, 0, dbErr(op, err)
	}
	if acct == nil {
		return nil, 0, nil
	}
	index, attr, value, count := indexHistory, attrAccount, accountID, "tasks"
	if q.Status != "" {
		if _, ok := task.ParseStatus(string(q.Status)); !ok {
			return nil, 0, nil
		}
		index, attr, value, count = indexStatus, attrAcctStatus, accountID+"#"+string(q.Status), countAttr(q.Status)
	}
	total := int(getN(acct, count))
	skip := max(q.Skip, 0)
	if skip >= total {
		return nil, total, nil
	}

	cond := "#" + attr + " = :v"
	// The index's sort key ascends: newest first reads it backwards.
	forward, after := q.Order == store.OldestFirst, "<"
	if forward {
		after = ">"
	}
	in := &dynamodb.QueryInput{
		TableName:                 &s.t.Tasks,
		IndexName:                 &index,
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names(&cond),
		ExpressionAttributeValues: vals{":v": str(value)},
		ScanIndexForward:          &forward,
	}
	if !q.After.IsZero() {
		// The index's sort key orders the history: the page starts
		// past the cursor's (below it newest first, above it oldest
		// first), and the query reads nothing before it. (ExclusiveStartKey
		// made of the cursor would do the same, but DynamoDB Local serves
		// it half as fast again as a key condition.) The cursor's task
		// need not exist any more.
		cond += " AND #" + attrHist + " " + after + " :after"
		in.KeyConditionExpression = &cond
		in.ExpressionAttributeNames = names(&cond)
		in.ExpressionAttributeValues[":after"] = str(histKey(q.After.CreatedAt, q.After.ID))
	}
	for skip > 0 {
		in.Select = types.SelectCount
		in.Limit = int32Ptr(min(skip, maxQueryLimit))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, 0, dbErr(op, err)
		}
		skip -= int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return nil, total, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	in.Select = types.SelectAllProjectedAttributes
	var tasks []task.Task
	for q.Limit <= 0 || len(tasks) < q.Limit {
		in.Limit = nil
		if q.Limit > 0 {
			in.Limit = int32Ptr(min(q.Limit-len(tasks), maxQueryLimit))
		}
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, 0, dbErr(op, err)
		}
		for _, it := range out.Items {
			t, err := decodeTask(it)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", op, err)
			}
			tasks = append(tasks, t)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return tasks, total, nil
}

func int32Ptr(v int) *int32 {
	n := int32(v)
	return &n
}

// Unfinished implements store.Store. Tasks are listed oldest first. It
// scans the sparse unfinished index, which holds only the tasks pending or
// processing, so it reads nothing else.
func (s *Store) Unfinished(ctx context.Context) ([]task.Task, error) {
	op := "list unfinished tasks"
	if err := s.check(op); err != nil {
		return nil, err
	}
	items, err := s.scanIndex(ctx, s.t.Tasks, indexUnfinished)
	if err != nil {
		return nil, dbErr(op, err)
	}
	tasks := make([]task.Task, 0, len(items))
	for _, it := range items {
		t, err := decodeTask(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		tasks = append(tasks, t)
	}
	slices.SortFunc(tasks, func(a, b task.Task) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return tasks, nil
}

// transition is the task update that moves t, read in status from, to the
// status t now has, writing the fields set: conditioned on from, so that
// of two concurrent moves only one happens.
func (s *Store) transition(t task.Task, from task.Status, set item) update {
	v := vals{":from": str(string(from))}
	var parts []string
	add := func(name string, value types.AttributeValue) {
		parts = append(parts, fmt.Sprintf("#%s = :%s", name, name))
		v[":"+name] = value
	}
	st := statusAttrs(t)
	for _, name := range []string{"status", attrAcctStatus} {
		add(name, st[name])
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		add(name, set[name])
	}
	expr := "SET " + strings.Join(parts, ", ")
	if t.Status.Terminal() {
		expr += " REMOVE #" + attrUnfinished
	}
	return update{table: s.t.Tasks, key: taskKey(t.ID), expr: expr, cond: "#status = :from", vals: v}
}

// MarkProcessing implements store.Store.
func (s *Store) MarkProcessing(ctx context.Context, id string, at time.Time) (task.Task, error) {
	op := "start processing " + id
	var t task.Task
	err := s.retry(ctx, op, func() error {
		var err error
		if t, err = s.readTask(ctx, op, id); err != nil {
			return err
		}
		tr := lifecycle.MarkProcessing(t, fromMS(ms(at)))
		if !tr.Changed {
			return nil
		}
		t = tr.Task
		up := s.transition(t, task.Pending, item{"startedAt": num(ms(t.StartedAt))})
		m := movement{a: account{Account: domain.Account{ID: t.AccountID}},
			counts: map[task.Status]int{task.Pending: -1, task.Processing: 1}}
		acct := m.items(s.t.Accounts)
		events, err := s.eventItems(ctx, op, t)
		if err != nil {
			return err
		}
		items := append([]types.TransactWriteItem{up.transactItem()}, acct...)
		if tr.Refund != nil {
			back, err := s.giveBack(ctx, op, t, int(tr.Refund.Amount), at)
			if err != nil {
				return err
			}
			items = append(items, back...)
		}
		return retryOnCondition(s.transact(ctx, op, append(items, events...)))
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// SetOperation implements store.Store. The write is conditioned on the
// task being processing with the Operation read (none, or the submit
// marker), so that of two concurrent calls only the first is kept; the
// other reads the task again.
func (s *Store) SetOperation(ctx context.Context, id, from, to string) (task.Task, error) {
	what := "set operation of " + id
	var t task.Task
	err := s.retry(ctx, what, func() error {
		var err error
		if t, err = s.readTask(ctx, what, id); err != nil {
			return err
		}
		tr := lifecycle.SetOperation(t, from, to)
		if !tr.Changed {
			return nil
		}
		t = tr.Task
		u := update{table: s.t.Tasks, key: taskKey(id), expr: "SET #operation = :operation",
			cond: "#status = :from AND attribute_not_exists(#operation)",
			vals: vals{":operation": str(to), ":from": str(string(task.Processing))}}
		if to == "" {
			u.expr = "REMOVE #operation"
			delete(u.vals, ":operation")
		}
		if from != "" {
			u.cond = "#status = :from AND #operation = :was"
			u.vals[":was"] = str(from)
		}
		if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
			if _, ok := conditionFailed(err); ok {
				return errRetry
			}
			return dbErr(what, err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// SetProgress implements store.Store: a write conditioned on the task
// being processing, and nothing when it is not.
func (s *Store) SetProgress(ctx context.Context, id string, percent int) error {
	u := update{table: s.t.Tasks, key: taskKey(id), expr: "SET #progress = :progress",
		cond: "#status = :processing", vals: vals{":progress": num(percent), ":processing": str(string(task.Processing))}}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, ok := conditionFailed(err); ok {
			return nil
		}
		return dbErr("set progress of "+id, err)
	}
	return nil
}

// finish moves task id to the terminal state that move (lifecycle.Complete
// or lifecycle.Fail, given arg) decides at at: it writes the task in one
// transaction with what move returns besides (the release of its
// in-flight slot, the refund with its ledger entry) and the move's
// webhook events. The task's update is
// conditioned on the status it was read in, which makes the refund happen
// once: of two concurrent finishes, the second reads the task again and
// finds it terminal. It returns the task as it is after, or as it was
// read when move refuses.
func finish[A any](ctx context.Context, s *Store, op, id string,
	move func(task.Task, A, time.Time) (lifecycle.Transition, error), arg A, at time.Time) (task.Task, error) {
	var t task.Task
	var after int64 // a last stamp of the account found, for the refund's
	err := s.retry(ctx, op, func() error {
		var err error
		if t, err = s.readTask(ctx, op, id); err != nil {
			return err
		}
		tr, err := move(t, arg, fromMS(ms(at)))
		if err != nil || !tr.Changed {
			return err
		}
		from := t.Status
		t = tr.Task
		set := item{"completedAt": num(ms(t.CompletedAt)), "refunded": num(t.CreditsRefunded)}
		if len(t.Videos) > 0 {
			b, err := json.Marshal(t.Videos)
			if err != nil {
				return fmt.Errorf("%s: encode videos: %w", op, err)
			}
			set["videos"] = str(string(b))
		}
		if t.Failure != nil {
			b, err := json.Marshal(t.Failure)
			if err != nil {
				return fmt.Errorf("%s: encode failure: %w", op, err)
			}
			set["failure"] = str(string(b))
		}
		for k, v := range billingAttrs(t.Billing) {
			set[k] = v
		}
		up := s.transition(t, from, set)

		m := movement{
			a:        account{Account: domain.Account{ID: t.AccountID}},
			inFlight: tr.InFlight,
			counts:   map[task.Status]int{from: -1, t.Status: 1},
			entry:    tr.Refund,
			stamp:    stamp(after),
		}
		acct := m.items(s.t.Accounts)
		events, err := s.eventItems(ctx, op, t)
		if err != nil {
			return err
		}
		items := append([]types.TransactWriteItem{up.transactItem()}, acct...)
		if tr.Refund != nil {
			back, err := s.giveBack(ctx, op, t, int(tr.Refund.Amount), at)
			if err != nil {
				return err
			}
			items = append(items, back...)
		}
		err = s.transact(ctx, op, append(items, events...))
		if ce, ok := err.(*conditionError); ok && tr.Refund != nil && ce.has(1) {
			// A later stamp was applied first: the next one goes above it.
			a, err := s.readAccount(ctx, op, t.AccountID)
			if err != nil {
				return err
			}
			after = a.last
		}
		return retryOnCondition(err)
	})
	return t, err
}

// giveBack are the writes returning amount credits refunded at at to the
// spending caps' windows of t's key (lifecycle.GiveBack), for the
// refund's transaction: each is conditioned on the window as read, so
// that a start counted in between makes the transaction retry.
func (s *Store) giveBack(ctx context.Context, op string, t task.Task, amount int, at time.Time) ([]types.TransactWriteItem, error) {
	if t.KeyID == "" {
		return nil, nil
	}
	day, month := domain.SpendKeys(t.KeyID, t.CreatedAt)
	got, err := s.batchGet(ctx, map[string][]item{s.t.Counters: {counterKey(day), counterKey(month)}})
	if err != nil {
		return nil, dbErr(op, err)
	}
	var items []types.TransactWriteItem
	for _, it := range got[s.t.Counters] {
		read := readTally(it)
		w, ok := lifecycle.GiveBack(read, amount, at)
		if !ok {
			continue
		}
		items = append(items, update{
			table: s.t.Counters,
			key:   counterKey(getS(it, attrCounterPK)),
			expr:  "SET #count = :count",
			cond:  "#count = :read AND #expiresAt = :expires",
			vals: vals{":count": num(w.Count), ":read": num(read.Count),
				":expires": num(ms(read.Ends))},
		}.transactItem())
	}
	return items, nil
}

// Complete implements store.Store. On a failed task it returns the task as
// it is with domain.ErrTerminal.
func (s *Store) Complete(ctx context.Context, id string, c domain.Completion, at time.Time) (task.Task, error) {
	return finish(ctx, s, "complete task "+id, id, lifecycle.Complete, c, at)
}

// Fail implements store.Store. On a completed task it returns the task as
// it is with domain.ErrTerminal.
func (s *Store) Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error) {
	return finish(ctx, s, "fail task "+id, id, lifecycle.Fail, f, at)
}
