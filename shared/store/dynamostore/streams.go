package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/domain"
)

// The open streams of a key are one item of the counters table, (key)
// with leases, a map of lease name to its expiry (unix ms), v, a version
// every write adds one to, and ttl. An open reads the item, counts the
// leases not yet expired and writes the map back without the expired
// ones and with its own, conditioned on the version it read: two opens
// racing for the last slot cannot both take it, whichever Lambda serves
// them. A renew and a close change one entry and the version, so an open
// that read before them tries again. ttl follows the latest lease, for
// DynamoDB to delete an item whose streams are all gone.

// leaseName is the attribute name of lease in the map: "#l<lease>" in an
// expression (names() maps it), so a lease is letters, digits and _.
func leaseName(lease string) string { return "l" + lease }

// OpenStream implements store.Store.
func (s *Store) OpenStream(ctx context.Context, w domain.Window, lease string, at time.Time) (int, error) {
	op := "open stream " + w.Key
	if !validLease(lease) {
		return 0, fmt.Errorf("%s: lease %q: want letters, digits and _", op, lease)
	}
	var held int
	err := s.retry(ctx, op, func() error {
		it, err := s.getItem(ctx, s.t.Counters, counterKey(w.Key))
		if err != nil {
			return dbErr(op, err)
		}
		live := map[string]types.AttributeValue{}
		var earliest int64
		if m, ok := it["leases"].(*types.AttributeValueMemberM); ok {
			for name, v := range m.Value {
				exp := getN(item{"n": v}, "n")
				if exp <= ms(at) {
					continue
				}
				live[name] = v
				if earliest == 0 || exp < earliest {
					earliest = exp
				}
			}
		}
		if len(live) >= w.Limit {
			full := w
			full.ExpiresAt = fromMS(earliest)
			return &domain.LimitError{Window: full}
		}
		live[leaseName(lease)] = num(ms(w.ExpiresAt))
		u := update{
			table: s.t.Counters,
			key:   counterKey(w.Key),
			expr:  "SET #leases = :leases, #v = :v, #ttl = :ttl",
			vals: vals{":leases": &types.AttributeValueMemberM{Value: live},
				":v": num(getN(it, "v") + 1), ":ttl": num(s.ttl(w.ExpiresAt, at))},
		}
		if it == nil {
			u.cond = "attribute_not_exists(#key)"
		} else {
			u.cond, u.vals[":was"] = "#v = :was", num(getN(it, "v"))
		}
		if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
			if _, ok := conditionFailed(err); ok {
				return errRetry // another open, renew or close came first
			}
			return dbErr(op, err)
		}
		held = len(live)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return held, nil
}

// RenewStream implements store.Store.
func (s *Store) RenewStream(ctx context.Context, key, lease string, expires time.Time) error {
	op := "renew stream " + key
	if err := s.check(op); err != nil {
		return err
	}
	l := "#leases.#" + leaseName(lease)
	u := update{
		table: s.t.Counters,
		key:   counterKey(key),
		expr:  "SET " + l + " = :exp, #v = #v + :one, #ttl = :ttl",
		cond:  "attribute_exists(" + l + ")",
		vals:  vals{":exp": num(ms(expires)), ":one": num(1), ":ttl": num(s.ttl(expires, s.now()))},
	}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, ok := conditionFailed(err); ok {
			return fmt.Errorf("%s: lease %s: %w", op, lease, domain.ErrNotFound)
		}
		return dbErr(op, err)
	}
	return nil
}

// CloseStream implements store.Store.
func (s *Store) CloseStream(ctx context.Context, key, lease string) error {
	op := "close stream " + key
	if err := s.check(op); err != nil {
		return err
	}
	l := "#leases.#" + leaseName(lease)
	u := update{
		table: s.t.Counters,
		key:   counterKey(key),
		expr:  "REMOVE " + l + " SET #v = #v + :one",
		cond:  "attribute_exists(" + l + ")",
		vals:  vals{":one": num(1)},
	}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, ok := conditionFailed(err); ok {
			return nil // already gone: an open dropped it once it expired
		}
		return dbErr(op, err)
	}
	return nil
}

// validLease reports whether lease can name an attribute in an
// expression.
func validLease(lease string) bool {
	if lease == "" || len(lease) > 64 {
		return false
	}
	for _, r := range lease {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
