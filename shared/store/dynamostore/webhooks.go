package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

var _ store.Webhooks = (*Store)(nil)

// The webhooks table (infra/docs/dynamodb-tables.md): partition pk, sort
// sk.
//   - "W#<account>": the account's endpoints ("E#<id>"), its signing
//     secret ("S") and the version of its set of endpoints ("V"), which
//     every move that writes events checks, so that an endpoint created
//     or deleted meanwhile makes the move read them again;
//   - "D#<delivery id>", "D": an outbox item, one per event and target;
//     while pending it carries due ("P") and nextAt, the keys of the due
//     index, which the worker queries for what is due; a replay sets
//     replayAt, which the claim that takes the item removes: the stream
//     carries the replay's MODIFY to the deliver function (template.yaml
//     filters on replayAt), so that a replay is sent now rather than at
//     the next scheduled run (issue 20);
//   - "A#<endpoint id>" (or "A#task#<account>" for the URLs starts carry):
//     the attempts, sorted by time.
const (
	whAccountPrefix = "W#"
	whEndpointSort  = "E#"
	whSecretSort    = "S"
	whVersionSort   = "V"
	whDeliveryPK    = "D#"
	whDeliverySort  = "D"
	whAttemptPrefix = "A#"
	attrWhPK        = "pk"
	attrWhSort      = "sk"
	attrDue         = "due"
	attrNextAt      = "nextAt"
	indexDue        = "due"
	duePending      = "P"
)

// webhookRetention is how long deliveries and attempts are kept (TTL):
// a delivery older than this cannot be replayed.
const webhookRetention = 30 * 24 * time.Hour

func whKey(pk, sk string) item { return item{attrWhPK: str(pk), attrWhSort: str(sk)} }

func endpointKey(accountID, id string) item {
	return whKey(whAccountPrefix+accountID, whEndpointSort+id)
}

func deliveryKey(id string) item { return whKey(whDeliveryPK+id, whDeliverySort) }

func attemptsPK(accountID, endpointID string) string {
	if endpointID == "" {
		return whAttemptPrefix + "task#" + accountID
	}
	return whAttemptPrefix + endpointID
}

func (s *Store) ttlOf(t time.Time) types.AttributeValue {
	return num(t.Add(webhookRetention).Unix())
}

// accountWebhooks is what a move needs of the account's webhooks: its
// endpoints and the version of their set.
type accountWebhooks struct {
	endpoints []domain.WebhookEndpoint
	secret    string
	version   int64
	versioned bool // the version item exists
}

// readAccountWebhooks reads the account's partition of the webhooks
// table, strongly consistent: endpoints (oldest first), secret, version.
func (s *Store) readAccountWebhooks(ctx context.Context, op, accountID string) (accountWebhooks, error) {
	var aw accountWebhooks
	pk := whAccountPrefix + accountID
	cond := "#pk = :pk"
	consistent := true
	in := &dynamodb.QueryInput{TableName: &s.t.Webhooks, KeyConditionExpression: &cond,
		ExpressionAttributeNames: names(&cond), ExpressionAttributeValues: vals{":pk": str(pk)}, ConsistentRead: &consistent}
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return aw, dbErr(op, fmt.Errorf("read webhooks: %w", err))
		}
		for _, it := range out.Items {
			switch sk := getS(it, attrWhSort); {
			case sk == whSecretSort:
				aw.secret = getS(it, "secret")
			case sk == whVersionSort:
				aw.version, aw.versioned = getN(it, "version"), true
			case len(sk) > len(whEndpointSort) && sk[:len(whEndpointSort)] == whEndpointSort:
				e := domain.WebhookEndpoint{ID: getS(it, "id"), AccountID: accountID, URL: getS(it, "url"),
					Secret: getS(it, "secret"), CreatedAt: getTime(it, "createdAt")}
				if err := json.Unmarshal([]byte(getS(it, "events")), &e.Events); err != nil {
					return aw, fmt.Errorf("%s: decode events of webhook %s: %w", op, e.ID, err)
				}
				aw.endpoints = append(aw.endpoints, e)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	slices.SortFunc(aw.endpoints, func(a, b domain.WebhookEndpoint) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
	return aw, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// versionCheck is a condition on the account's set of endpoints being
// the one read.
func (s *Store) versionCheck(accountID string, aw accountWebhooks) types.TransactWriteItem {
	cond := "attribute_not_exists(#pk)"
	var v vals
	if aw.versioned {
		cond, v = "#version = :version", vals{":version": num(aw.version)}
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.t.Webhooks, Key: whKey(whAccountPrefix+accountID, whVersionSort),
		ConditionExpression: &cond, ExpressionAttributeNames: names(&cond), ExpressionAttributeValues: v,
	}}
}

// bumpVersion changes the version of the account's set of endpoints.
func (s *Store) bumpVersion(accountID string) types.TransactWriteItem {
	return update{table: s.t.Webhooks, key: whKey(whAccountPrefix+accountID, whVersionSort),
		expr: "ADD #version :one", vals: vals{":one": num(1)}}.transactItem()
}

// eventItems are the items a move of t writes in its transaction: a
// check that the account's endpoints are still those read, and the outbox
// items of the event the move reports (lifecycle.Events). There are at most service.MaxWebhooks (10) + 2
// of them: with the task and the account items, well within a
// transaction's 100 items.
func (s *Store) eventItems(ctx context.Context, op string, t task.Task) ([]types.TransactWriteItem, error) {
	if domain.EventOf(t.Status) == "" {
		return nil, nil
	}
	aw, err := s.readAccountWebhooks(ctx, op, t.AccountID)
	if err != nil {
		return nil, err
	}
	items := []types.TransactWriteItem{s.versionCheck(t.AccountID, aw)}
	deliveries := lifecycle.Events(t, aw.endpoints)
	if len(deliveries) == 0 {
		return items, nil
	}
	snap, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("%s: encode event: %w", op, err)
	}
	for _, d := range deliveries {
		it := deliveryKey(d.ID)
		it["id"] = str(d.ID)
		it["account"] = str(d.AccountID)
		it["endpoint"] = str(d.EndpointID)
		it["url"] = str(d.URL)
		it["event"] = str(d.Event)
		it["taskId"] = str(d.Task.ID)
		it["task"] = str(string(snap))
		it["createdAt"] = num(ms(d.CreatedAt))
		it["state"] = str(d.State)
		it["attempts"] = num(0)
		it[attrDue] = str(duePending)
		it[attrNextAt] = num(ms(d.NextAt))
		it[attrTTL] = s.ttlOf(d.CreatedAt)
		// Not conditioned: the move happens once (its task update is
		// conditioned on the status it was read in).
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.t.Webhooks, Item: it}})
	}
	return items, nil
}

// CreateWebhook implements store.Webhooks.
func (s *Store) CreateWebhook(ctx context.Context, e domain.WebhookEndpoint) error {
	op := "create webhook " + e.ID
	if err := s.check(op); err != nil {
		return err
	}
	events, err := json.Marshal(e.Events)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	it := endpointKey(e.AccountID, e.ID)
	it["id"], it["url"], it["events"], it["secret"] = str(e.ID), str(e.URL), str(string(events)), str(e.Secret)
	it["createdAt"] = num(ms(e.CreatedAt))
	exists := "attribute_exists(#acct)"
	items := []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: &s.t.Accounts, Key: accountKey(e.AccountID),
			ConditionExpression: &exists, ExpressionAttributeNames: names(&exists)}},
		put(s.t.Webhooks, it, "attribute_not_exists(#pk)"),
		s.bumpVersion(e.AccountID),
	}
	return s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		var ce *conditionError
		switch {
		case errors.As(err, &ce) && ce.has(0):
			return fmt.Errorf("%s: account %s: %w", op, e.AccountID, domain.ErrNotFound)
		case errors.As(err, &ce):
			return fmt.Errorf("%s: %w", op, domain.ErrExists)
		}
		return err
	})
}

// Webhooks implements store.Webhooks.
func (s *Store) Webhooks(ctx context.Context, accountID string) ([]domain.WebhookEndpoint, error) {
	op := "list webhooks of " + accountID
	if err := s.check(op); err != nil {
		return nil, err
	}
	aw, err := s.readAccountWebhooks(ctx, op, accountID)
	return aw.endpoints, err
}

// DeleteWebhook implements store.Webhooks. Its pending deliveries are
// failed when the worker next claims them (ClaimDeliveries), which finds
// the endpoint gone.
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string, at time.Time) error {
	op := "delete webhook " + id
	exists := "attribute_exists(#pk)"
	items := []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: &s.t.Webhooks, Key: endpointKey(accountID, id),
			ConditionExpression: &exists, ExpressionAttributeNames: names(&exists)}},
		s.bumpVersion(accountID),
	}
	return s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		var ce *conditionError
		if errors.As(err, &ce) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		return err
	})
}

// SigningSecret implements store.Webhooks.
func (s *Store) SigningSecret(ctx context.Context, accountID, fresh string) (string, error) {
	op := "signing secret of " + accountID
	it := whKey(whAccountPrefix+accountID, whSecretSort)
	it["secret"] = str(fresh)
	exists := "attribute_exists(#acct)"
	items := []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: &s.t.Accounts, Key: accountKey(accountID),
			ConditionExpression: &exists, ExpressionAttributeNames: names(&exists)}},
		put(s.t.Webhooks, it, "attribute_not_exists(#pk)"),
	}
	secret := fresh
	err := s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		var ce *conditionError
		switch {
		case errors.As(err, &ce) && ce.has(0):
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		case errors.As(err, &ce): // the account has one: keep it
			got, err := s.getItem(ctx, s.t.Webhooks, whKey(whAccountPrefix+accountID, whSecretSort))
			if err != nil {
				return dbErr(op, err)
			}
			secret = getS(got, "secret")
			return nil
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

func decodeDelivery(it item) (domain.Delivery, error) {
	d := domain.Delivery{ID: getS(it, "id"), AccountID: getS(it, "account"), EndpointID: getS(it, "endpoint"),
		URL: getS(it, "url"), Event: getS(it, "event"), CreatedAt: getTime(it, "createdAt"),
		State: getS(it, "state"), Attempts: int(getN(it, "attempts")), NextAt: getTime(it, attrNextAt)}
	if err := json.Unmarshal([]byte(getS(it, "task")), &d.Task); err != nil {
		return d, fmt.Errorf("decode event %s: %w", d.ID, err)
	}
	return d, nil
}

// ClaimDeliveries implements store.Webhooks. The due index is read
// eventually consistent; each claim is a write conditioned on the item
// being pending and due at the time read, so that two workers never
// claim one delivery for the same lease.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, fits store.ClaimFits) ([]domain.Delivery, error) {
	op := "claim webhook deliveries"
	if err := s.check(op); err != nil {
		return nil, err
	}
	cond := "#due = :due AND #nextAt <= :now"
	in := &dynamodb.QueryInput{TableName: &s.t.Webhooks, IndexName: strPtr(indexDue), KeyConditionExpression: &cond,
		ExpressionAttributeNames: names(&cond), ExpressionAttributeValues: vals{":due": str(duePending), ":now": num(ms(now))},
		Limit: int32Ptr(store.ClaimScan)}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, dbErr(op, err)
	}
	secrets := map[string]accountWebhooks{}
	var claimed []domain.Delivery
	for _, it := range out.Items {
		if len(claimed) >= limit {
			break
		}
		d, err := decodeDelivery(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		aw, ok := secrets[d.AccountID]
		if !ok {
			if aw, err = s.readAccountWebhooks(ctx, op, d.AccountID); err != nil {
				return nil, err
			}
			secrets[d.AccountID] = aw
		}
		d.Secret = aw.secret
		if d.EndpointID != "" {
			d.Secret = ""
			for _, e := range aw.endpoints {
				if e.ID == d.EndpointID {
					d.Secret = e.Secret
				}
			}
		}
		u := update{table: s.t.Webhooks, key: deliveryKey(d.ID), cond: "#state = :pending AND #nextAt = :seen",
			vals: vals{":pending": str(domain.DeliveryPending), ":seen": num(ms(d.NextAt))}}
		gone := d.EndpointID != "" && d.Secret == ""
		switch {
		case gone:
			// Its endpoint was deleted: it fails, unsent.
			u.expr = "SET #state = :failed REMOVE #due, #replayAt"
			u.vals[":failed"] = str(domain.DeliveryFailed)
		case fits != nil && !fits(claimed, d):
			continue // left due for a later claim
		default:
			u.expr = "SET #nextAt = :lease REMOVE #replayAt"
			u.vals[":lease"] = num(ms(now.Add(lease)))
		}
		if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
			if _, ok := conditionFailed(err); ok {
				continue // claimed or changed by someone else meanwhile
			}
			return nil, dbErr(op, err)
		}
		if !gone {
			claimed = append(claimed, d)
		}
	}
	return claimed, nil
}

func strPtr(s string) *string { return &s }

// RecordAttempt implements store.Webhooks.
func (s *Store) RecordAttempt(ctx context.Context, a store.DeliveryAttempt, state string, next time.Time) error {
	op := fmt.Sprintf("record attempt %d of %s", a.Attempt, a.DeliveryID)
	return s.retry(ctx, op, func() error {
		cur, err := s.getItem(ctx, s.t.Webhooks, deliveryKey(a.DeliveryID))
		if err != nil {
			return dbErr(op, err)
		}
		if cur == nil {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		attempts := max(getN(cur, "attempts"), int64(a.Attempt))
		u := update{table: s.t.Webhooks, key: deliveryKey(a.DeliveryID),
			cond: "attribute_exists(#pk) AND #attempts = :attempts0",
			vals: vals{":state": str(state), ":attempts": num(attempts), ":attempts0": cur["attempts"],
				":nextAt": num(ms(next))}}
		if state == domain.DeliveryPending {
			u.expr = "SET #state = :state, #attempts = :attempts, #nextAt = :nextAt, #due = :due"
			u.vals[":due"] = str(duePending)
		} else {
			u.expr = "SET #state = :state, #attempts = :attempts, #nextAt = :nextAt REMOVE #due"
		}
		endpoint, account := getS(cur, "endpoint"), getS(cur, "account")
		at := whKey(attemptsPK(account, endpoint), attemptSort(a))
		at["deliveryId"], at["event"], at["taskId"] = str(a.DeliveryID), str(getS(cur, "event")), str(getS(cur, "taskId"))
		at["attempt"], at["at"], at["status"] = num(a.Attempt), num(ms(a.At)), num(a.Status)
		at["latencyMs"], at["error"], at[attrTTL] = num(a.Latency.Milliseconds()), str(a.Error), s.ttlOf(a.At)
		err = s.transact(ctx, op, []types.TransactWriteItem{u.transactItem(),
			{Put: &types.Put{TableName: &s.t.Webhooks, Item: at}}})
		return retryOnCondition(err)
	})
}

// attemptSort orders an endpoint's attempts by time: newest first is a
// backward query.
func attemptSort(a store.DeliveryAttempt) string {
	return sortable(ms(a.At)) + "#" + sortable(int64(a.Attempt)) + "#" + a.DeliveryID
}

// attemptCursor is the form of attemptSort: a cursor is the sort key of
// the last attempt of the previous page.
var attemptCursor = regexp.MustCompile(`^[0-9]{15}#[0-9]{15}#[!-~]{1,200}$`)

// Attempts implements store.Webhooks.
func (s *Store) Attempts(ctx context.Context, accountID, endpointID string, q store.AttemptQuery) ([]store.DeliveryAttempt, string, error) {
	op := "list attempts of webhook " + endpointID
	if err := s.check(op); err != nil {
		return nil, "", err
	}
	if q.Cursor != "" && !attemptCursor.MatchString(q.Cursor) {
		return nil, "", fmt.Errorf("%s: %w", op, store.ErrBadCursor)
	}
	e, err := s.getItem(ctx, s.t.Webhooks, endpointKey(accountID, endpointID))
	if err != nil {
		return nil, "", dbErr(op, err)
	}
	if e == nil {
		return nil, "", fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	pk := attemptsPK(accountID, endpointID)
	cond := "#pk = :pk"
	v := vals{":pk": str(pk)}
	if q.Cursor != "" {
		cond += " AND #sk < :after"
		v[":after"] = str(q.Cursor)
	}
	forward, consistent := false, true
	in := &dynamodb.QueryInput{TableName: &s.t.Webhooks, KeyConditionExpression: &cond, ExpressionAttributeNames: names(&cond),
		ExpressionAttributeValues: v, ScanIndexForward: &forward, ConsistentRead: &consistent, Limit: int32Ptr(limit + 1)}
	var out []store.DeliveryAttempt
	var sorts []string
	for len(out) <= limit {
		res, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", dbErr(op, err)
		}
		for _, it := range res.Items {
			out = append(out, store.DeliveryAttempt{DeliveryID: getS(it, "deliveryId"), Event: getS(it, "event"),
				TaskID: getS(it, "taskId"), Attempt: int(getN(it, "attempt")), At: getTime(it, "at"),
				Status: int(getN(it, "status")), Latency: time.Duration(getN(it, "latencyMs")) * time.Millisecond,
				Error: getS(it, "error")})
			sorts = append(sorts, getS(it, attrWhSort))
		}
		if len(res.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	next := ""
	if len(out) > limit {
		out, next = out[:limit], sorts[limit-1]
	}
	return out, next, nil
}

// ReplayDelivery implements store.Webhooks.
func (s *Store) ReplayDelivery(ctx context.Context, accountID, endpointID, deliveryID string, at time.Time) error {
	op := "replay delivery " + deliveryID
	if err := s.check(op); err != nil {
		return err
	}
	exists := "attribute_exists(#pk)"
	items := []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: &s.t.Webhooks, Key: endpointKey(accountID, endpointID),
			ConditionExpression: &exists, ExpressionAttributeNames: names(&exists)}},
		update{table: s.t.Webhooks, key: deliveryKey(deliveryID),
			expr: "SET #state = :pending, #nextAt = :at, #due = :due, #replayAt = :at",
			cond: "attribute_exists(#pk) AND #account = :account AND #endpoint = :endpoint",
			vals: vals{":pending": str(domain.DeliveryPending), ":at": num(ms(at)), ":due": str(duePending),
				":account": str(accountID), ":endpoint": str(endpointID)}}.transactItem(),
	}
	return s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		var ce *conditionError
		if errors.As(err, &ce) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		return err
	})
}

// NextDelivery implements store.Webhooks.
func (s *Store) NextDelivery(ctx context.Context) (time.Time, bool, error) {
	op := "next webhook delivery"
	if err := s.check(op); err != nil {
		return time.Time{}, false, err
	}
	cond := "#due = :due"
	in := &dynamodb.QueryInput{TableName: &s.t.Webhooks, IndexName: strPtr(indexDue), KeyConditionExpression: &cond,
		ExpressionAttributeNames: names(&cond), ExpressionAttributeValues: vals{":due": str(duePending)}, Limit: int32Ptr(1)}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return time.Time{}, false, dbErr(op, err)
	}
	if len(out.Items) == 0 {
		return time.Time{}, false, nil
	}
	return getTime(out.Items[0], attrNextAt), true, nil
}
