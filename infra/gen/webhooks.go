package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/client"
)

// webhooksCmd manages the account's webhook endpoints (an extension of
// the contract): add, list, rm, their delivery log and replay.
func webhooksCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Manage the endpoints that receive your tasks' events",
		Long: "Webhook endpoints receive generation.processing, generation.completed and\n" +
			"generation.failed, signed the Standard Webhooks way. The signing secret of an\n" +
			"endpoint is shown once, by `gen webhooks add`; `gen webhooks secret` shows the\n" +
			"account's secret, which signs the events sent to `gen generate --webhook URL`.",
	}
	cmd.AddCommand(webhooksAddCmd(opts), webhooksListCmd(opts), webhooksRmCmd(opts),
		webhooksSecretCmd(opts), webhooksDeliveriesCmd(opts), webhooksReplayCmd(opts))
	return cmd
}

func webhooksAddCmd(opts *options) *cobra.Command {
	var events []string
	cmd := &cobra.Command{
		Use:   "add URL",
		Short: "Register an https endpoint; prints its signing secret, shown this once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			wh, err := c.CreateWebhook(cmd.Context(), client.WebhookRequest{URL: args[0], Events: events})
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(wh)
			}
			tw := tabwriter.NewWriter(opts.env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "Webhook:\t%s\n", wh.ID)
			fmt.Fprintf(tw, "URL:\t%s\n", wh.URL)
			fmt.Fprintf(tw, "Events:\t%s\n", strings.Join(wh.Events, ", "))
			fmt.Fprintf(tw, "Secret:\t%s\n", wh.Secret)
			tw.Flush()
			fmt.Fprintln(opts.env.stdout, "Keep the secret now: it is not shown again. Verify deliveries with it.")
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&events, "event", nil, "an event to send (repeatable; default all three): "+
		client.EventProcessing+", "+client.EventCompleted+" or "+client.EventFailed)
	return cmd
}

func webhooksListCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List your webhook endpoints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			whs, err := c.Webhooks(cmd.Context())
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"webhooks": whs})
			}
			if len(whs) == 0 {
				fmt.Fprintln(opts.env.stdout, "No webhooks.")
				return nil
			}
			tw := tabwriter.NewWriter(opts.env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "WEBHOOK\tCREATED\tEVENTS\tURL")
			for _, wh := range whs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", wh.ID, wh.CreatedAt.Local().Format(time.DateTime),
					strings.Join(wh.Events, ","), wh.URL)
			}
			return tw.Flush()
		},
	}
}

func webhooksRmCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "rm WEBHOOK_ID",
		Short: "Remove a webhook endpoint; its pending deliveries are not sent",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			if err := c.DeleteWebhook(cmd.Context(), args[0]); err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"id": args[0], "deleted": true})
			}
			fmt.Fprintf(opts.env.stdout, "Removed %s.\n", args[0])
			return nil
		},
	}
}

func webhooksSecretCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "secret",
		Short: "Show the secret that signs the events sent to generate --webhook URLs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			s, err := c.WebhookSigningSecret(cmd.Context())
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"secret": s})
			}
			fmt.Fprintln(opts.env.stdout, s)
			return nil
		},
	}
}

func webhooksDeliveriesCmd(opts *options) *cobra.Command {
	var q client.DeliveriesQuery
	cmd := &cobra.Command{
		Use:   "deliveries WEBHOOK_ID",
		Short: "List an endpoint's delivery attempts, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			p, err := c.WebhookDeliveries(cmd.Context(), args[0], q)
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(p)
			}
			printDeliveries(opts.env.stdout, p)
			return nil
		},
	}
	cmd.Flags().IntVar(&q.Limit, "limit", 20, "attempts per page, 1 to 100")
	cmd.Flags().StringVar(&q.Cursor, "cursor", "", "the page after this cursor (printed under a full page)")
	return cmd
}

func printDeliveries(w io.Writer, p *client.DeliveriesPage) {
	if len(p.Deliveries) == 0 {
		fmt.Fprintln(w, "No deliveries.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DELIVERY\tATTEMPT\tAT\tEVENT\tTASK\tSTATUS\tMS\tERROR")
	for _, a := range p.Deliveries {
		status := fmt.Sprint(a.Status)
		if a.Status == 0 {
			status = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\n", a.DeliveryID, a.Attempt, a.At.Local().Format(time.DateTime),
			a.Event, a.TaskID, status, a.LatencyMS, oneLine(a.Error, 60))
	}
	tw.Flush()
	if p.NextCursor != "" {
		fmt.Fprintf(w, "next page: --cursor %s\n", p.NextCursor)
	}
}

func webhooksReplayCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "replay WEBHOOK_ID DELIVERY_ID",
		Short: "Send a delivery again, now, with the same webhook-id",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			if err := c.ReplayDelivery(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"webhookId": args[0], "deliveryId": args[1], "queued": true})
			}
			fmt.Fprintf(opts.env.stdout, "Queued %s again.\n", args[1])
			return nil
		},
	}
}
