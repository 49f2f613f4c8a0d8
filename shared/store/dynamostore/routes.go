package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/genvideo/gen/shared/store"
)

var _ store.RouteChecks = (*Store)(nil)

// A route's check is an item of the counters table, (key) "models:" +
// the route's name, with checkedAt (unix ms) and the models asked and
// those missing as JSON text; no ttl: it stays until the next check
// replaces it. It is tiny and read by every start, as the counters are.
func routeCheckKey(route string) item { return counterKey("models:" + route) }

// PutRouteCheck implements store.RouteChecks: one UpdateItem, on the
// condition that the item holds no later check.
func (s *Store) PutRouteCheck(ctx context.Context, c store.RouteCheck) error {
	op := "write the check of route " + c.Route
	if err := s.check(op); err != nil {
		return err
	}
	models, err := json.Marshal(c.Models)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	missing, err := json.Marshal(append([]string{}, c.Missing...))
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	u := update{
		table: s.t.Counters,
		key:   routeCheckKey(c.Route),
		expr:  "SET #checkedAt = :at, #models = :models, #missing = :missing",
		cond:  "attribute_not_exists(#checkedAt) OR #checkedAt <= :at",
		vals:  vals{":at": num(ms(c.CheckedAt)), ":models": str(string(models)), ":missing": str(string(missing))},
	}
	if _, err := s.db.UpdateItem(ctx, u.input()); err != nil {
		if _, later := conditionFailed(err); later {
			return nil
		}
		return dbErr(op, err)
	}
	return nil
}

// RouteChecks implements store.RouteChecks: one BatchGetItem (a stack
// has far fewer than 100 routes).
func (s *Store) RouteChecks(ctx context.Context, routes []string) ([]store.RouteCheck, error) {
	op := "read the routes' checks"
	if err := s.check(op); err != nil {
		return nil, err
	}
	if len(routes) == 0 {
		return nil, nil
	}
	keys := make([]item, len(routes))
	for i, r := range routes {
		keys[i] = routeCheckKey(r)
	}
	got, err := s.batchGet(ctx, map[string][]item{s.t.Counters: keys})
	if err != nil {
		return nil, dbErr(op, err)
	}
	var out []store.RouteCheck
	for _, it := range got[s.t.Counters] {
		key := getS(it, attrCounterPK)
		c := store.RouteCheck{Route: key[len("models:"):], CheckedAt: getTime(it, "checkedAt")}
		if err := json.Unmarshal([]byte(getS(it, "models")), &c.Models); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", op, key, err)
		}
		if err := json.Unmarshal([]byte(getS(it, "missing")), &c.Missing); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", op, key, err)
		}
		out = append(out, c)
	}
	return out, nil
}
