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
	"github.com/genvideo/gen/shared/task"
)

// dynamoHistory measures store.Tasks on DynamoDB Local, which the AWS
// history Lambda calls: page 1, page 500 by cursor and by skip, of an
// account of cfg.tasks tasks, one call after another; then page 1 and
// page 500 by cursor of an account of cfg.dynamoScale tasks (the scale
// workload's, smaller: DynamoDB Local writes a few thousand items a
// second). Both are seeded through dynamostore.ImportTasks.
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
	p50, err := dynamoPages(ctx, st, "acct_bench_history", cfg.tasks, true, out)
	if err != nil || p50 == nil {
		return err
	}
	fmt.Fprintf(out, "History on DynamoDB Local, page 500 / page 1 (p50): cursor %.2f, skip %.2f\n",
		float64(p50["page 500 (cursor)"])/float64(p50["page 1"]), float64(p50["page 500 (skip)"])/float64(p50["page 1"]))
	if cfg.dynamoScale <= cfg.tasks {
		return nil
	}
	big, err := dynamoPages(ctx, st, "acct_bench_scale", cfg.dynamoScale, false, out)
	if err != nil || big == nil {
		return err
	}
	fmt.Fprintf(out, "History on DynamoDB Local, %d tasks / %d tasks (p50): page 1 %.2f, page 500 (cursor) %.2f\n",
		cfg.dynamoScale, cfg.tasks, float64(big["page 1"])/float64(p50["page 1"]),
		float64(big["page 500 (cursor)"])/float64(p50["page 500 (cursor)"]))
	return nil
}

// dynamoPages seeds account with n tasks and measures its history pages
// (by skip too, if skip), returning their p50s by name; nil when the
// account has fewer than 500 pages.
func dynamoPages(ctx context.Context, st *dynamostore.Store, account string, n int, skip bool, out io.Writer) (map[string]time.Duration, error) {
	if err := st.CreateAccount(ctx, domain.Account{ID: account, Credits: 0, CreatedAt: time.Now()}); err != nil {
		return nil, err
	}
	t0 := time.Now()
	base := time.Now().Add(-time.Duration(n) * time.Millisecond).UTC().Truncate(time.Millisecond)
	err := st.ImportTasks(ctx, n, func(i int) task.Task {
		created := base.Add(time.Duration(i) * time.Millisecond)
		return task.Task{ID: task.NewID(created), AccountID: account, KeyName: "bench history", Type: "text-to-video",
			Model: "gen-3.1-lite-generate-001", Prompt: fmt.Sprintf("history task %d", i),
			CreditsCost: 1, Status: task.Pending, CreatedAt: created, Deadline: created.Add(24 * time.Hour)}
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "seeded %d tasks on DynamoDB Local in %v\n", n, time.Since(t0).Round(time.Millisecond))
	if n < 500*pageSize {
		return nil, nil
	}
	// The page is asked with one task more, as the history endpoint does.
	last, _, err := st.Tasks(ctx, account, store.TaskQuery{Skip: 499*pageSize - 1, Limit: 1})
	if err != nil || len(last) != 1 {
		return nil, fmt.Errorf("the task before page 500: %v", err)
	}
	queries := []struct {
		name string
		q    store.TaskQuery
	}{
		{"page 1", store.TaskQuery{Limit: pageSize + 1}},
		{"page 500 (cursor)", store.TaskQuery{After: store.CursorOf(last[0]), Limit: pageSize + 1}},
	}
	if skip {
		queries = append(queries, struct {
			name string
			q    store.TaskQuery
		}{"page 500 (skip)", store.TaskQuery{Skip: 499 * pageSize, Limit: pageSize + 1}})
	}
	p50 := map[string]time.Duration{}
	fmt.Fprintf(out, "\nHistory on DynamoDB Local, store.Tasks of %d tasks, one call after another\n", n)
	for _, qq := range queries {
		var lat []time.Duration
		for range 100 {
			t := time.Now()
			page, _, err := st.Tasks(ctx, account, qq.q)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", qq.name, err)
			}
			if len(page) < pageSize {
				return nil, fmt.Errorf("%s: %d tasks, want at least %d", qq.name, len(page), pageSize)
			}
			lat = append(lat, time.Since(t))
		}
		var p99 time.Duration
		p50[qq.name], p99 = percentiles(lat)
		fmt.Fprintf(out, "  %-18s p50 %s  p99 %s\n", qq.name, ms(p50[qq.name]), ms(p99))
	}
	return p50, nil
}
