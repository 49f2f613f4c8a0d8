package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/client"
)

// defaultBaseURL is the local server of `make run`.
const defaultBaseURL = "http://127.0.0.1:8080"

// Exit statuses.
const (
	exitOK      = 0
	exitError   = 1
	exitWaiting = 3 // generate stopped waiting; the task goes on
)

// environment is what the command gets from its process, so that tests
// can run it in-process.
type environment struct {
	getenv        func(string) string
	stdin         io.Reader
	stdout        io.Writer
	stderr        io.Writer
	stderrIsATerm bool
	// newClient, when set, replaces client.New (tests give it an HTTP
	// client that checks every exchange against the OpenAPI document).
	newClient func(baseURL, key string, opts ...client.Option) (*client.Client, error)
}

// options are the flags every command has.
type options struct {
	env     environment
	baseURL string
	json    bool
	key     string
}

// stillWaiting is generate's error when --wait-timeout ran out: the task
// goes on.
type stillWaiting struct{ err *client.WaitTimeoutError }

func (e *stillWaiting) Error() string { return e.err.Error() }

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, env environment) int {
	opts := &options{env: env, key: env.getenv("GEN_API_KEY")}
	root := newRoot(opts)
	root.SetArgs(args)
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	reportError(opts, err)
	var waiting *stillWaiting
	if errors.As(err, &waiting) {
		return exitWaiting
	}
	return exitError
}

func newRoot(opts *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "gen",
		Short: "Generate videos with the gen API",
		Long: "gen talks to the gen video-generation API.\n\n" +
			"The API key comes from GEN_API_KEY; the service's address from GEN_BASE_URL\n" +
			"(default " + defaultBaseURL + ", the server of `make run`).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	base := opts.env.getenv("GEN_BASE_URL")
	if base == "" {
		base = defaultBaseURL
	}
	pf := root.PersistentFlags()
	pf.StringVar(&opts.baseURL, "base-url", base, "address of the service (env GEN_BASE_URL)")
	pf.BoolVar(&opts.json, "json", false, "print JSON on stdout, for scripts")
	root.AddCommand(generateCmd(opts), extendCmd(opts), quoteCmd(opts), statusCmd(opts), watchCmd(opts), downloadCmd(opts), historyCmd(opts), modelsCmd(opts))
	root.AddCommand(manageCmds(opts)...)
	root.AddCommand(webhooksCmd(opts))
	root.AddCommand(mcpCmd(opts))
	return root
}

// client builds the API client.
func (o *options) client() (*client.Client, error) {
	newClient := client.New
	if o.env.newClient != nil {
		newClient = o.env.newClient
	}
	// A person is waiting: short waits the service asks for (a busy
	// account's 5 s) are waited out, longer ones reported.
	return newClient(o.baseURL, o.key, client.WithUserAgent("gen-cli/1"),
		client.WithRetry(client.RetryPolicy{MaxRetryAfter: 10 * time.Second}))
}

// printJSON writes v as indented JSON to stdout.
func (o *options) printJSON(v any) error {
	enc := json.NewEncoder(o.env.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func statusCmd(opts *options) *cobra.Command {
	return taskCmd(opts, "status TASK_ID", "Show a task's status", (*client.Client).Status)
}

// taskCmd is a command that calls do with the task id it is given and
// prints the task do answers: status, and cancel.
func taskCmd(opts *options, use, short string, do func(*client.Client, context.Context, string) (*client.Task, error)) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			t, err := do(c, cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(t)
			}
			printTask(opts.env.stdout, t)
			return nil
		},
	}
}

func printTask(w io.Writer, t *client.Task) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Task:\t%s\n", t.TaskID)
	fmt.Fprintf(tw, "Status:\t%s\n", t.Status)
	fmt.Fprintf(tw, "Type:\t%s\n", t.Type)
	fmt.Fprintf(tw, "Model:\t%s\n", t.Model)
	fmt.Fprintf(tw, "Prompt:\t%s\n", oneLine(t.Prompt, 100))
	p := t.Parameters
	seed := "none (the backend takes no seed)"
	if p.Seed != nil {
		seed = strconv.FormatInt(*p.Seed, 10)
	}
	fmt.Fprintf(tw, "Video:\t%d x %ds, %s %s, audio %v, seed %s\n", p.SampleCount, p.DurationSeconds, p.AspectRatio, p.Resolution, p.GenerateAudio, seed)
	fmt.Fprintf(tw, "Credits:\t%d\n", t.CreditsCost)
	fmt.Fprintf(tw, "Created:\t%s\n", t.CreatedAt.Local().Format(time.DateTime))
	if !t.CompletedAt.IsZero() {
		fmt.Fprintf(tw, "Finished:\t%s\n", t.CompletedAt.Local().Format(time.DateTime))
	}
	if t.ProcessingTime != nil {
		fmt.Fprintf(tw, "Took:\t%ds\n", *t.ProcessingTime)
	}
	if t.Status == client.StatusCompleted {
		fmt.Fprintf(tw, "Videos:\t%d (save them with: gen download %s)\n", len(t.Videos), t.TaskID)
	}
	if t.Error != nil {
		fmt.Fprintf(tw, "Error:\t%s: %s\n", t.Error.Code, t.Error.Message)
	}
	if n := t.Refunded(); n > 0 {
		fmt.Fprintf(tw, "Refunded:\t%d credits\n", n)
	}
	tw.Flush()
}

func downloadCmd(opts *options) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "download TASK_ID",
		Short: "Save a completed task's videos",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			paths, err := c.SaveVideos(cmd.Context(), args[0], out)
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(map[string]any{"taskId": args[0], "files": paths})
			}
			for _, p := range paths {
				fmt.Fprintln(opts.env.stdout, p)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", ".", "directory to save the videos in")
	return cmd
}

func historyCmd(opts *options) *cobra.Command {
	var q client.HistoryQuery
	var status string
	var all bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List your tasks, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Status = client.Status(status)
			c, err := opts.client()
			if err != nil {
				return err
			}
			var page *client.HistoryPage
			if all {
				page = &client.HistoryPage{Success: true, Pagination: client.Pagination{Skip: q.Skip}}
				for it, err := range c.AllHistory(cmd.Context(), q) {
					if err != nil {
						return err
					}
					page.Items = append(page.Items, it)
				}
				page.Pagination.Total, page.Pagination.Limit = q.Skip+len(page.Items), len(page.Items)
			} else if page, err = c.History(cmd.Context(), q); err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(page)
			}
			printHistory(opts.env.stdout, page)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "only tasks in this status: pending, processing, completed or failed")
	f.IntVar(&q.Limit, "limit", 20, "tasks per page, 1 to 100")
	f.IntVar(&q.Skip, "skip", 0, "tasks to skip")
	f.BoolVar(&all, "all", false, "list every task, page after page")
	return cmd
}

func printHistory(w io.Writer, page *client.HistoryPage) {
	if len(page.Items) == 0 {
		fmt.Fprintln(w, "No tasks.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tMODEL\tCREDITS\tVIDEOS\tCREATED\tPROMPT")
	for _, it := range page.Items {
		credits := fmt.Sprint(it.CreditsCost)
		if n := it.Refunded(); n > 0 {
			credits += fmt.Sprintf(" (-%d)", n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", it.TaskID, it.Status, shortModel(it.Model), credits,
			it.VideoCount, it.CreatedAt.Local().Format(time.DateTime), oneLine(it.Prompt, 40))
	}
	tw.Flush()
	first := page.Pagination.Skip + 1
	fmt.Fprintf(w, "%d-%d of %d", first, page.Pagination.Skip+len(page.Items), page.Pagination.Total)
	if page.Pagination.HasMore {
		fmt.Fprintf(w, "; next page: --skip %d", page.Pagination.Skip+len(page.Items))
	}
	fmt.Fprintln(w)
}

func modelsCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the models and their prices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := opts.client()
			if err != nil {
				return err
			}
			l, err := c.Models(cmd.Context())
			if err != nil {
				return err
			}
			if opts.json {
				return opts.printJSON(l)
			}
			tw := tabwriter.NewWriter(opts.env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tNAME\tCREDITS/VIDEO\tNO AUDIO\tCAN DO")
			for _, m := range l.Models {
				name := m.Name
				if m.ID == l.DefaultModel {
					name += " (default)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", m.ID, name, m.Pricing.CreditsPerVideo,
					m.Pricing.CreditsPerVideoNoAudio, strings.Join(m.Capabilities, ", "))
			}
			tw.Flush()
			fmt.Fprintln(opts.env.stdout, "Short names for --model: fast, quality, lite.")
			return nil
		},
	}
}

// oneLine is s on one line, cut to n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// shortModel is the short name of a model id, or the id.
func shortModel(id string) string {
	for short, full := range modelNames {
		if full == id {
			return short
		}
	}
	return id
}

// modelNames are the short names --model takes.
var modelNames = map[string]string{
	"fast":    client.ModelFast,
	"quality": client.ModelQuality,
	"lite":    client.ModelLite,
}
