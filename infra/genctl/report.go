package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/settings"
)

// defaultReportDays is the period of a report without --since.
const defaultReportDays = 30

func report(opts *options) *cobra.Command {
	var since, until string
	var creditUSD float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "report [--since DATE] [--until DATE]",
		Short: "Print tasks, credits, refunds, provider cost and margin per model and route",
		Long: "Print, per model and route, over a period: the tasks started, the credits charged and refunded\n" +
			"(from the ledger: the totals are its charges and refunds exactly), the provider cost those tasks\n" +
			"recorded when they completed, the revenue (credits kept at " + settings.CreditUSD + ") and the margin.\n" +
			"A task counts in the period of its start, with its provider cost; a refund in the period it was made.\n" +
			"The route is empty for a task that made no video (failed, or still running).\n" +
			"DATE is 2026-11-01 (UTC midnight) or RFC 3339; the period is [since, until), by default the last " +
			strconv.Itoa(defaultReportDays) + " days.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now().UTC()
			from, err := parseDate("--since", since, now.AddDate(0, 0, -defaultReportDays))
			if err != nil {
				return err
			}
			to, err := parseDate("--until", until, now)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("credit-usd") {
				// The service's own price of a credit.
				r := settings.NewReader(os.LookupEnv)
				creditUSD = r.Float(settings.CreditUSD, settings.DefaultCreditUSD, 0.0001, 100)
				if err := r.Err(); err != nil {
					return err
				}
			}
			return withBackend(cmd.Context(), opts, func(b *backend) error {
				rep, err := admin.MarginReport(cmd.Context(), b.store, from, to, creditUSD)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), reportJSON(rep))
				}
				return printReport(cmd.OutOrStdout(), rep)
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "start of the period, included (default "+strconv.Itoa(defaultReportDays)+" days ago)")
	cmd.Flags().StringVar(&until, "until", "", "end of the period, excluded (default now)")
	cmd.Flags().Float64Var(&creditUSD, "credit-usd", 0,
		"what a credit sells for in USD (default: env "+settings.CreditUSD+", else "+strconv.FormatFloat(settings.DefaultCreditUSD, 'g', -1, 64)+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// parseDate reads a date (UTC midnight) or an RFC 3339 time; empty is
// def.
func parseDate(flag, v string, def time.Time) (time.Time, error) {
	if v == "" {
		return def, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want a date (2026-11-01) or an RFC 3339 time", flag, v)
	}
	return t, nil
}

// routeName shows a row's route; a task that made no video has none.
func routeName(r string) string {
	if r == "" {
		return "-"
	}
	return r
}

func printReport(out io.Writer, rep admin.Report) error {
	fmt.Fprintf(out, "from %s to %s, a credit at $%g\n\n", rep.Since.Format(time.RFC3339), rep.Until.Format(time.RFC3339), rep.CreditUSD)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tROUTE\tTASKS\tCHARGED\tREFUNDED\tPROVIDER USD\tREVENUE USD\tMARGIN USD\t")
	line := func(model, route string, r admin.ReportRow) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t\n", model, route, r.Tasks, r.Charged, r.Refunded,
			r.ProviderCostUSD, r.RevenueUSD(rep.CreditUSD), r.MarginUSD(rep.CreditUSD))
	}
	for _, r := range rep.Rows {
		line(r.Model, routeName(r.Route), r)
	}
	line("TOTAL", "", rep.Total)
	return tw.Flush()
}

// reportRow is a row of the JSON report.
type reportRow struct {
	Model           string  `json:"model,omitempty"`
	Route           string  `json:"route,omitempty"`
	Tasks           int     `json:"tasks"`
	Charged         int64   `json:"creditsCharged"`
	Refunded        int64   `json:"creditsRefunded"`
	ProviderCostUSD float64 `json:"providerCostUsd"`
	RevenueUSD      float64 `json:"revenueUsd"`
	MarginUSD       float64 `json:"marginUsd"`
}

func reportJSON(rep admin.Report) map[string]any {
	row := func(r admin.ReportRow) reportRow {
		return reportRow{Model: r.Model, Route: r.Route, Tasks: r.Tasks, Charged: r.Charged, Refunded: r.Refunded,
			ProviderCostUSD: r.ProviderCostUSD, RevenueUSD: r.RevenueUSD(rep.CreditUSD), MarginUSD: r.MarginUSD(rep.CreditUSD)}
	}
	rows := make([]reportRow, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		rows = append(rows, row(r))
	}
	return map[string]any{"since": rep.Since.Format(time.RFC3339), "until": rep.Until.Format(time.RFC3339),
		"creditUsd": rep.CreditUSD, "rows": rows, "total": row(rep.Total)}
}
