package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genvideo/gen/shared/client"
)

// generateFlags are generate's own flags.
type generateFlags struct {
	model, image, first, last  string
	samples, duration          int
	aspect, resolution, negate string
	noAudio                    bool
	seed                       int64
	out                        string
	noWait                     bool
	waitTimeout                time.Duration
	progress                   string
	idempotencyKey             string
	webhook                    string
	maxCredits                 int
}

func generateCmd(opts *options) *cobra.Command {
	var g generateFlags
	cmd := &cobra.Command{
		Use:   `generate "PROMPT"`,
		Short: "Generate videos from a prompt (and images), wait for them, save them",
		Long: "Start a generation, show its progress against the estimate on stderr, and save\n" +
			"the videos into --out. With --image it is image-to-video; with --first and --last,\n" +
			"a video from the first to the last frame (quality and fast models only).\n\n" +
			"An image larger than 4 MiB (a frame: 2 MiB) is first uploaded straight to the\n" +
			"service's storage (POST /api/gen/uploads), which takes up to 20 MiB on every\n" +
			"deployment; smaller ones travel in the start request.\n\n" +
			"The start carries a fresh Idempotency-Key, so it is retried safely when the\n" +
			"service is briefly unavailable or busy. If --wait-timeout runs out, the task goes\n" +
			"on: gen exits with status 3 and says how to fetch the videos later.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := g.request(cmd, args[0])
			if err != nil {
				return err
			}
			return generate(cmd, opts, g, req)
		},
	}
	f := cmd.Flags()
	g.addRequestFlags(f)
	f.StringVar(&g.out, "out", ".", "directory to save the videos in")
	f.BoolVar(&g.noWait, "no-wait", false, "only start the generation; print its task id")
	f.DurationVar(&g.waitTimeout, "wait-timeout", 10*time.Minute, "how long to wait for the videos")
	f.StringVar(&g.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, else lines), bar, plain or none")
	f.StringVar(&g.idempotencyKey, "idempotency-key", "", "Idempotency-Key of the start (default a fresh one)")
	f.StringVar(&g.webhook, "webhook", "", "also send this task's events to this https URL (signed with the secret gen webhooks secret shows)")
	return cmd
}

// addRequestFlags adds the flags that make the start request: generate's
// and quote's.
func (g *generateFlags) addRequestFlags(f *pflag.FlagSet) {
	f.StringVar(&g.model, "model", "", "fast (the default), quality or lite, or a model id")
	f.StringVar(&g.image, "image", "", "image to start from (JPEG or PNG, up to 20 MiB): image-to-video")
	f.StringVar(&g.first, "first", "", "first frame (with --last): first-last-frame")
	f.StringVar(&g.last, "last", "", "last frame (with --first)")
	f.IntVar(&g.samples, "samples", 0, "number of videos, 1 or 2 (default 1)")
	f.IntVar(&g.duration, "duration", 0, "seconds: 4, 6 or 8 (default 8)")
	f.StringVar(&g.aspect, "aspect", "", `aspect ratio, "16:9" (default) or "9:16"`)
	f.StringVar(&g.resolution, "resolution", "", "720p or 1080p (default 1080p; lite renders 720p)")
	f.StringVar(&g.negate, "negative", "", "what the video should not show")
	f.BoolVar(&g.noAudio, "no-audio", false, "no audio track (cheaper)")
	f.Int64Var(&g.seed, "seed", 0, "seed, for a reproducible video (default random)")
	f.IntVar(&g.maxCredits, "max-credits", 0, "refuse the start if it would cost more than this many credits (nothing is charged)")
}

func quoteCmd(opts *options) *cobra.Command {
	g := generateFlags{progress: "none"}
	cmd := &cobra.Command{
		Use:   `quote "PROMPT"`,
		Short: "Show what a generate with the same flags would charge, without starting it",
		Long: "Ask the service what the start of `gen generate` with the same prompt and flags\n" +
			"would charge now, the balance it would leave, and whether a limit would refuse it.\n" +
			"The request is validated exactly as the start would be (images included); nothing\n" +
			"is charged and no task is created. Another request may change the answer.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := g.request(cmd, args[0])
			if err != nil {
				return err
			}
			return quote(cmd, opts, g, req)
		},
	}
	g.addRequestFlags(cmd.Flags())
	return cmd
}

func quote(cmd *cobra.Command, opts *options, g generateFlags, req client.Request) error {
	ctx := cmd.Context()
	c, err := opts.client()
	if err != nil {
		return err
	}
	var q *client.Quote
	switch {
	case g.image != "":
		q, err = c.QuoteImageToVideo(ctx, req, client.ImageFile(g.image))
	case g.first != "":
		q, err = c.QuoteFirstLastFrame(ctx, req, client.ImageFile(g.first), client.ImageFile(g.last))
	default:
		q, err = c.QuoteTextToVideo(ctx, req)
	}
	if err != nil {
		return err
	}
	if opts.json {
		return opts.printJSON(q)
	}
	w := opts.env.stdout
	fmt.Fprintf(w, "%s with %s: %d credits; balance %d, after %d.\n", q.Endpoint, q.Model, q.CreditsRequired, q.Balance, q.BalanceAfter)
	if q.Refusal != nil {
		fmt.Fprintf(w, "It would be refused now: %d %s: %s\n", q.Refusal.Status, q.Refusal.Code, q.Refusal.Message)
		if q.Refusal.RetryAfterSeconds > 0 {
			fmt.Fprintf(w, "Retry in %ds.\n", q.Refusal.RetryAfterSeconds)
		}
	}
	return nil
}

// request checks the flags and makes the start request.
func (g generateFlags) request(cmd *cobra.Command, prompt string) (client.Request, error) {
	req := client.Request{
		Prompt:          prompt,
		Model:           g.model,
		SampleCount:     g.samples,
		DurationSeconds: g.duration,
		AspectRatio:     g.aspect,
		Resolution:      g.resolution,
		NegativePrompt:  g.negate,
		WebhookURL:      g.webhook,
		MaxCredits:      g.maxCredits,
	}
	if id, ok := modelNames[g.model]; ok {
		req.Model = id
	}
	if g.noAudio {
		req.GenerateAudio = new(false)
	}
	if cmd.Flags().Changed("seed") {
		req.Seed = new(g.seed)
	}
	switch {
	case g.image != "" && (g.first != "" || g.last != ""):
		return req, errors.New("use either --image or --first and --last, not both")
	case (g.first == "") != (g.last == ""):
		return req, errors.New("--first and --last go together: give both frames")
	}
	switch g.progress {
	case "auto", "bar", "plain", "none":
	default:
		return req, fmt.Errorf("--progress %q: want auto, bar, plain or none", g.progress)
	}
	return req, nil
}

// generateResult is generate's JSON output.
type generateResult struct {
	Started startedJSON  `json:"started"`
	Task    *client.Task `json:"task,omitempty"`
	Files   []string     `json:"files,omitempty"`
}

// startedJSON is the start's answer with the Idempotency-Key it was sent
// with, which sends it again (the answer itself does not carry it).
type startedJSON struct {
	*client.Started
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

func generate(cmd *cobra.Command, opts *options, g generateFlags, req client.Request) error {
	ctx := cmd.Context()
	c, err := opts.client()
	if err != nil {
		return err
	}
	key := g.idempotencyKey
	if key == "" {
		key = client.NewIdempotencyKey()
	}
	idem := client.WithIdempotencyKey(key)
	var s *client.Started
	switch {
	case g.image != "":
		s, err = c.ImageToVideo(ctx, req, client.ImageFile(g.image), idem)
	case g.first != "":
		s, err = c.FirstLastFrame(ctx, req, client.ImageFile(g.first), client.ImageFile(g.last), idem)
	default:
		s, err = c.TextToVideo(ctx, req, idem)
	}
	if err != nil {
		return err
	}
	stderr := opts.env.stderr
	fmt.Fprintf(stderr, "Started %s: %d credits (%d left). Estimated wait: %s.\n",
		s.TaskID, s.CreditsUsed, s.RemainingCredits, s.EstimatedWaitTime)
	if g.noWait {
		if opts.json {
			return opts.printJSON(generateResult{Started: startedJSON{s, s.IdempotencyKey}})
		}
		fmt.Fprintln(opts.env.stdout, s.TaskID)
		return nil
	}

	p := newProgress(g.progress, opts.env, s)
	task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: g.waitTimeout, OnPoll: p.update})
	p.done(task, err)
	var timeout *client.WaitTimeoutError
	if errors.As(err, &timeout) {
		if opts.json {
			opts.printJSON(generateResult{Started: startedJSON{s, s.IdempotencyKey}, Task: task})
		}
		return &stillWaiting{timeout}
	}
	if err != nil {
		return err
	}
	paths, err := c.SaveVideos(ctx, s.TaskID, g.out)
	if err != nil {
		return err
	}
	if opts.json {
		return opts.printJSON(generateResult{Started: startedJSON{s, s.IdempotencyKey}, Task: task, Files: paths})
	}
	for _, path := range paths {
		fmt.Fprintln(opts.env.stdout, path)
	}
	return nil
}
