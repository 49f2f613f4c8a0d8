package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/client"
)

// watchCmd follows a task's live event stream: one line per state (JSON
// lines with --json), then the task as status prints it.
func watchCmd(opts *options) *cobra.Command {
	var last string
	cmd := &cobra.Command{
		Use:   "watch TASK_ID",
		Short: "Follow a task live (Server-Sent Events) until it finishes",
		Long: "Follow a task's live event stream (GET /api/gen/status/{taskId}/events): a line for\n" +
			"each state it reaches (pending, processing with its progress, completed or failed),\n" +
			"the states it went through already first, then the finished task. A dropped stream\n" +
			"is resumed with Last-Event-ID, so no state is shown twice. Exit status 1 if the task\n" +
			"failed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			w := opts.env.stdout
			t, err := c.Watch(cmd.Context(), args[0], client.WatchOptions{LastEventID: last, OnEvent: func(ev client.Event) {
				if opts.json {
					// One JSON line per event.
					json.NewEncoder(w).Encode(map[string]any{"id": ev.ID, "event": ev.Type, "task": ev.Task})
					return
				}
				line := ev.Type
				if ev.Task.Status == client.StatusProcessing && ev.Task.Progress > 0 {
					line += fmt.Sprintf(" (%d%%)", ev.Task.Progress)
				}
				fmt.Fprintf(w, "%s  %s\n", ev.ID, line)
			}})
			var failed *client.GenerationError
			if err != nil && !errors.As(err, &failed) {
				return err
			}
			if !opts.json && t != nil {
				printTask(w, t)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&last, "last-event-id", "", "resume after this event id")
	return cmd
}
