package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/client"
)

// manageCmds are cancel, delete and credits.
func manageCmds(opts *options) []*cobra.Command {
	return []*cobra.Command{cancelCmd(opts), deleteCmd(opts), creditsCmd(opts)}
}

func cancelCmd(opts *options) *cobra.Command {
	return taskCmd(opts, "cancel TASK_ID", "Cancel a pending or processing task; its credits are refunded", (*client.Client).Cancel)
}

func deleteCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "delete TASK_ID",
		Short: "Delete a finished task and its videos (cancel a running one first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"taskId": args[0], "deleted": true})
			}
			fmt.Fprintf(opts.env.stdout, "Deleted %s and its files.\n", args[0])
			return nil
		},
	}
}

func creditsCmd(opts *options) *cobra.Command {
	var q client.CreditsQuery
	cmd := &cobra.Command{
		Use:   "credits",
		Short: "Show your balance, held credits, limits and recent ledger entries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			cr, err := c.Credits(cmd.Context(), q)
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(cr)
			}
			printCredits(opts.env.stdout, cr)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&q.Limit, "limit", 10, "ledger entries to show, 1 to 100")
	f.StringVar(&q.Cursor, "cursor", "", "show the page after this one (the cursor a previous page printed)")
	return cmd
}

func printCredits(w io.Writer, cr *client.Credits) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Balance:\t%d credits\n", cr.Balance)
	fmt.Fprintf(tw, "Held:\t%d credits by %d generations in flight\n", cr.Held, cr.InFlight)
	fmt.Fprintf(tw, "Tier:\t%s\n", cr.Tier)
	l := cr.Limits
	window := func(name string, lw client.LimitWindow) {
		fmt.Fprintf(tw, "%s:\t%d of %d left", name, lw.Remaining, lw.Limit)
		if !lw.Reset.IsZero() {
			fmt.Fprintf(tw, " (resets %s)", lw.Reset.Local().Format(time.DateTime))
		}
		fmt.Fprintln(tw)
	}
	window("Requests/minute", l.RequestsPerMinute)
	window("Requests/day", l.RequestsPerDay)
	if l.StartsPerMinute != nil {
		window("Starts/minute", *l.StartsPerMinute)
	}
	window("Concurrent", l.ConcurrentGenerations)
	tw.Flush()
	if len(cr.Ledger) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tKIND\tAMOUNT\tBALANCE\tTASK\tNOTE")
	for _, e := range cr.Ledger {
		fmt.Fprintf(tw, "%s\t%s\t%+d\t%d\t%s\t%s\n", e.At.Local().Format(time.DateTime), e.Kind, e.Amount, e.Balance, e.TaskID, e.Note)
	}
	tw.Flush()
	if cr.Pagination.NextCursor != "" {
		fmt.Fprintf(w, "More: gen credits --cursor %s\n", cr.Pagination.NextCursor)
	}
}
