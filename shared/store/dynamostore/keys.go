package dynamostore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// A key is two items: "H#<hash>" holds the key, so that authenticating a
// request is one read by the hash; "I#<id>" claims the id and points to
// the hash, for revocation. Only the first has the attributes of the
// by-account index, which therefore lists each key once.
const (
	keyHashPrefix = "H#"
	keyIDPrefix   = "I#"
)

func keyHashKey(hash string) item { return item{attrKeyPK: str(keyHashPrefix + hash)} }
func keyIDKey(id string) item     { return item{attrKeyPK: str(keyIDPrefix + id)} }

func keyItem(k store.Key) item {
	it := keyHashKey(k.Hash)
	it["id"] = str(k.ID)
	it["hash"] = str(k.Hash)
	it[attrKeyOwner] = str(k.AccountID)
	it[attrKeyOrder] = str(sortable(ms(k.CreatedAt)) + "#" + k.ID)
	it["name"] = str(k.Name)
	it["tier"] = str(k.Tier)
	it["requestsPerMinute"] = num(k.Limits.RequestsPerMinute)
	it["requestsPerDay"] = num(k.Limits.RequestsPerDay)
	it["startsPerMinute"] = num(k.Limits.StartsPerMinute)
	it["maxInFlight"] = num(k.Limits.MaxInFlight)
	it["createdAt"] = num(ms(k.CreatedAt))
	putTime(it, "revokedAt", k.RevokedAt)
	for name, v := range capAttrs(k.Caps) {
		it[name] = v
	}
	return it
}

// capAttrs are the attributes of a key's spending caps.
func capAttrs(c store.SpendCaps) item {
	return item{"maxCreditsPerDay": num(c.MaxPerDay), "maxCreditsPerMonth": num(c.MaxPerMonth),
		"holderCreditsPerDay": num(c.HolderPerDay), "holderCreditsPerMonth": num(c.HolderPerMonth)}
}

func decodeKey(it item) store.Key {
	return store.Key{
		ID:        getS(it, "id"),
		Hash:      getS(it, "hash"),
		AccountID: getS(it, attrKeyOwner),
		Name:      getS(it, "name"),
		Tier:      getS(it, "tier"),
		Limits: store.KeyLimits{
			RequestsPerMinute: int(getN(it, "requestsPerMinute")),
			RequestsPerDay:    int(getN(it, "requestsPerDay")),
			StartsPerMinute:   int(getN(it, "startsPerMinute")),
			MaxInFlight:       int(getN(it, "maxInFlight")),
		},
		Caps: store.SpendCaps{
			MaxPerDay:      getN(it, "maxCreditsPerDay"),
			MaxPerMonth:    getN(it, "maxCreditsPerMonth"),
			HolderPerDay:   getN(it, "holderCreditsPerDay"),
			HolderPerMonth: getN(it, "holderCreditsPerMonth"),
		},
		CreatedAt: getTime(it, "createdAt"),
		RevokedAt: getTime(it, "revokedAt"),
	}
}

// CreateKey implements store.Store. It returns domain.ErrExists if a key
// with that id or hash exists, and domain.ErrNotFound if the account does
// not.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	op := fmt.Sprintf("create key %s for %s", k.ID, k.AccountID)
	claim := keyIDKey(k.ID)
	claim["hash"] = str(k.Hash)
	exists := "attribute_exists(#acct)"
	items := []types.TransactWriteItem{
		put(s.t.Keys, keyItem(k), "attribute_not_exists(#pk)"),
		put(s.t.Keys, claim, "attribute_not_exists(#pk)"),
		{ConditionCheck: &types.ConditionCheck{
			TableName:                &s.t.Accounts,
			Key:                      accountKey(k.AccountID),
			ConditionExpression:      &exists,
			ExpressionAttributeNames: names(&exists),
		}},
	}
	return s.retry(ctx, op, func() error {
		err := s.transact(ctx, op, items)
		if ce, ok := err.(*conditionError); ok {
			if ce.has(0) || ce.has(1) {
				return fmt.Errorf("%s: %w", op, domain.ErrExists)
			}
			return fmt.Errorf("%s: account: %w", op, domain.ErrNotFound)
		}
		return err
	})
}

// KeyByHash implements store.Store. The read is strongly consistent, so
// that a revocation holds from the moment it returns.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	// Never put the hash in an error: it identifies a secret.
	op := "read key by hash"
	if err := s.check(op); err != nil {
		return store.Key{}, err
	}
	it, err := s.getItem(ctx, s.t.Keys, keyHashKey(hash))
	if err != nil {
		return store.Key{}, dbErr(op, err)
	}
	if it == nil {
		return store.Key{}, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	return decodeKey(it), nil
}

// Keys implements store.Store. Keys are listed oldest first. It reads the
// by-account index, which DynamoDB updates shortly after each write: a key
// created or revoked a moment ago may not show yet.
func (s *Store) Keys(ctx context.Context, accountID string) ([]store.Key, error) {
	op := "list keys of " + accountID
	if accountID == "" {
		op = "list keys"
	}
	if err := s.check(op); err != nil {
		return nil, err
	}
	var items []item
	var err error
	if accountID == "" {
		// The index holds only keys, so scanning it reads nothing else.
		items, err = s.scanIndex(ctx, s.t.Keys, indexKeys)
	} else {
		items, err = s.queryAll(ctx, s.t.Keys, indexKeys, attrKeyOwner, accountID)
	}
	if err != nil {
		return nil, dbErr(op, err)
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(getS(a, attrKeyOrder), getS(b, attrKeyOrder)) })
	keys := make([]store.Key, len(items))
	for i, it := range items {
		keys[i] = decodeKey(it)
	}
	return keys, nil
}

// RevokeKey implements store.Store. Revoking a revoked key changes
// nothing: it keeps the time it was first revoked.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	op := "revoke key " + id
	if err := s.check(op); err != nil {
		return err
	}
	claim, err := s.getItem(ctx, s.t.Keys, keyIDKey(id))
	if err != nil {
		return dbErr(op, err)
	}
	if claim == nil {
		return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	u := update{
		table: s.t.Keys,
		key:   keyHashKey(getS(claim, "hash")),
		expr:  "SET #revokedAt = if_not_exists(#revokedAt, :at)",
		cond:  "attribute_exists(#pk)",
		vals:  vals{":at": num(ms(at))},
	}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, ok := conditionFailed(err); ok {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		return dbErr(op, err)
	}
	return nil
}

// SetKeyCaps implements store.Store: one UpdateItem that SETs the caps u
// names and no other, returning the item as it is after. The key's id
// item is read for its hash, which never changes.
func (s *Store) SetKeyCaps(ctx context.Context, id string, u store.CapsUpdate) (store.SpendCaps, error) {
	op := "set spending caps of key " + id
	if u.Negative() {
		return store.SpendCaps{}, fmt.Errorf("%s: negative cap", op)
	}
	if err := s.check(op); err != nil {
		return store.SpendCaps{}, err
	}
	claim, err := s.getItem(ctx, s.t.Keys, keyIDKey(id))
	if err != nil {
		return store.SpendCaps{}, dbErr(op, err)
	}
	if claim == nil {
		return store.SpendCaps{}, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	var set []string
	vs := vals{}
	for _, f := range []struct {
		attr string
		v    *int64
	}{
		{"maxCreditsPerDay", u.MaxPerDay}, {"maxCreditsPerMonth", u.MaxPerMonth},
		{"holderCreditsPerDay", u.HolderPerDay}, {"holderCreditsPerMonth", u.HolderPerMonth},
	} {
		if f.v != nil {
			set = append(set, "#"+f.attr+" = :"+f.attr)
			vs[":"+f.attr] = num(*f.v)
		}
	}
	hash := getS(claim, "hash")
	if len(set) == 0 {
		k, err := s.KeyByHash(ctx, hash)
		if err != nil {
			return store.SpendCaps{}, fmt.Errorf("%s: %w", op, err)
		}
		return k.Caps, nil
	}
	in := update{table: s.t.Keys, key: keyHashKey(hash), expr: "SET " + strings.Join(set, ", "),
		cond: "attribute_exists(#pk)", vals: vs}.input()
	in.ReturnValues = types.ReturnValueAllNew
	out, err := s.db.UpdateItem(ctx, in)
	if err != nil {
		if _, ok := conditionFailed(err); ok {
			return store.SpendCaps{}, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		return store.SpendCaps{}, dbErr(op, err)
	}
	return decodeKey(out.Attributes).Caps, nil
}

// queryAll reads every item of one partition of an index.
func (s *Store) queryAll(ctx context.Context, table, index, attr, value string) ([]item, error) {
	cond := "#" + attr + " = :v"
	in := &dynamodb.QueryInput{
		TableName:                 &table,
		IndexName:                 &index,
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names(&cond),
		ExpressionAttributeValues: vals{":v": str(value)},
	}
	var items []item
	for pages := dynamodb.NewQueryPaginator(s.db, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		items = append(items, out.Items...)
	}
	return items, nil
}

// scanIndex reads every item of a (sparse) index.
func (s *Store) scanIndex(ctx context.Context, table, index string) ([]item, error) {
	in := &dynamodb.ScanInput{TableName: &table, IndexName: &index}
	var items []item
	for pages := dynamodb.NewScanPaginator(s.db, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		items = append(items, out.Items...)
	}
	return items, nil
}
