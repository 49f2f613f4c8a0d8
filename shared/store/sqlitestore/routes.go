package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/genvideo/gen/shared/store"
)

var _ store.RouteChecks = (*Store)(nil)

// PutRouteCheck implements store.RouteChecks.
func (s *Store) PutRouteCheck(ctx context.Context, c store.RouteCheck) error {
	models, err := json.Marshal(c.Models)
	if err != nil {
		return fmt.Errorf("route %s: %w", c.Route, err)
	}
	missing, err := json.Marshal(append([]string{}, c.Missing...))
	if err != nil {
		return fmt.Errorf("route %s: %w", c.Route, err)
	}
	op := "write the check of route " + c.Route
	return s.write(ctx, op, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO route_checks (route, checked_at, models, missing) VALUES (?, ?, ?, ?)
			ON CONFLICT (route) DO UPDATE SET checked_at = excluded.checked_at, models = excluded.models, missing = excluded.missing
			WHERE excluded.checked_at >= route_checks.checked_at`,
			c.Route, ms(c.CheckedAt), string(models), string(missing))
		return dbErrOrNil(op, err)
	})
}

// RouteChecks implements store.RouteChecks.
func (s *Store) RouteChecks(ctx context.Context, routes []string) ([]store.RouteCheck, error) {
	if len(routes) == 0 {
		return nil, nil
	}
	var out []store.RouteCheck
	args := make([]any, len(routes))
	for i, r := range routes {
		args[i] = r
	}
	op := "read the routes' checks"
	err := s.read(ctx, op, func(tx *txn) error {
		rows, err := tx.QueryContext(ctx, `SELECT route, checked_at, models, missing FROM route_checks WHERE route IN (?`+
			strings.Repeat(", ?", len(routes)-1)+`)`, args...)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c               store.RouteCheck
				at              int64
				models, missing string
			)
			if err := rows.Scan(&c.Route, &at, &models, &missing); err != nil {
				return dbErr(op, err)
			}
			c.CheckedAt = fromMS(at)
			if err := json.Unmarshal([]byte(models), &c.Models); err != nil {
				return fmt.Errorf("%s: route %s: %w", op, c.Route, err)
			}
			if err := json.Unmarshal([]byte(missing), &c.Missing); err != nil {
				return fmt.Errorf("%s: route %s: %w", op, c.Route, err)
			}
			out = append(out, c)
		}
		return dbErrOrNil(op, rows.Err())
	})
	return out, err
}
