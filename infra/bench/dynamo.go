package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
)

// dynamoHistory measures store.Tasks on DynamoDB Local, which the AWS
// history Lambda calls: page 1, page 500 by cursor and by skip, of an
// account of cfg.tasks tasks, one call after another.
func dynamoHistory(ctx context.Context, cfg config, out io.Writer) error {
	srv, err := dynamolocal.Start(ctx)
	if err != nil {
		return fmt.Errorf("DynamoDB Local: %w", err)
	}
	defer srv.Stop()
	st := dynamostore.New(srv.Client(), dynamostore.Config{TablePrefix: "bench-"})
	if err := st.CreateTables(ctx); err != nil {
		return err
	}
	const account = "acct_bench_history"
	if err := st.CreateAccount(ctx, domain.Account{ID: account, Credits: int64(cfg.tasks), CreatedAt: time.Now()}); err != nil {
		return err
	}
	t0 := time.Now()
	if err := seed(ctx, st, account, cfg.tasks, 8); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seeded %d tasks on DynamoDB Local in %v\n", cfg.tasks, time.Since(t0).Round(time.Millisecond))
	if cfg.tasks < 500*pageSize {
		return nil
	}
	// The page is asked with one task more, as the history endpoint does.
	last, _, err := st.Tasks(ctx, account, store.TaskQuery{Skip: 499*pageSize - 1, Limit: 1})
	if err != nil || len(last) != 1 {
		return fmt.Errorf("the task before page 500: %v", err)
	}
	queries := []struct {
		name string
		q    store.TaskQuery
	}{
		{"page 1", store.TaskQuery{Limit: pageSize + 1}},
		{"page 500 (cursor)", store.TaskQuery{After: store.CursorOf(last[0]), Limit: pageSize + 1}},
		{"page 500 (skip)", store.TaskQuery{Skip: 499 * pageSize, Limit: pageSize + 1}},
	}
	p50 := map[string]time.Duration{}
	fmt.Fprintf(out, "\nHistory on DynamoDB Local, store.Tasks of %d tasks, one call after another\n", cfg.tasks)
	for _, qq := range queries {
		var lat []time.Duration
		for range 100 {
			t := time.Now()
			page, _, err := st.Tasks(ctx, account, qq.q)
			if err != nil {
				return fmt.Errorf("%s: %w", qq.name, err)
			}
			// Page 500 of 10,000 tasks is the last: no task follows it.
			if len(page) < pageSize {
				return fmt.Errorf("%s: %d tasks, want at least %d", qq.name, len(page), pageSize)
			}
			lat = append(lat, time.Since(t))
		}
		p50[qq.name], _ = percentiles(lat)
		_, p99 := percentiles(lat)
		fmt.Fprintf(out, "  %-18s p50 %s  p99 %s\n", qq.name, ms(p50[qq.name]), ms(p99))
	}
	fmt.Fprintf(out, "History on DynamoDB Local, page 500 / page 1 (p50): cursor %.2f, skip %.2f\n",
		float64(p50["page 500 (cursor)"])/float64(p50["page 1"]), float64(p50["page 500 (skip)"])/float64(p50["page 1"]))
	return nil
}
