package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/wire"
)

// generateFlags are generate's own flags, and extend's.
type generateFlags struct {
	model, image, first, last  string
	references                 []string
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
	// extend is the task whose video an extension continues (gen extend,
	// gen quote extend).
	extend string
}

func generateCmd(opts *options) *cobra.Command {
	var g generateFlags
	cmd := &cobra.Command{
		Use:   `generate "PROMPT"`,
		Short: "Generate videos from a prompt (and images), wait for them, save them",
		Long: "Start a generation, show its progress against the estimate on stderr, and save\n" +
			"the videos into --out. With --image it is image-to-video; with --first and --last,\n" +
			"a video from the first to the last frame (quality and fast models only). With\n" +
			"--reference (a file or a direct upload's id, up to three times), the video keeps\n" +
			"the person, character or product of those images (where the model takes them).\n\n" +
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
	g.addStartFlags(f)
	return cmd
}

// addStartFlags adds the flags of a start that waits for its videos and
// saves them: generate's and extend's.
func (g *generateFlags) addStartFlags(f *pflag.FlagSet) {
	f.StringVar(&g.out, "out", ".", "directory to save the videos in")
	f.BoolVar(&g.noWait, "no-wait", false, "only start the generation; print its task id")
	f.DurationVar(&g.waitTimeout, "wait-timeout", 10*time.Minute, "how long to wait for the videos")
	f.StringVar(&g.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, else lines), bar, plain or none")
	f.StringVar(&g.idempotencyKey, "idempotency-key", "", "Idempotency-Key of the start (default a fresh one)")
	f.StringVar(&g.webhook, "webhook", "", "also send this task's events to this https URL (signed with the secret gen webhooks secret shows)")
}

// addRequestFlags adds the flags that make the start request: generate's
// and quote's.
func (g *generateFlags) addRequestFlags(f *pflag.FlagSet) {
	f.StringVar(&g.model, "model", "", "fast (the default), quality or lite, or a model id")
	f.StringVar(&g.image, "image", "", "image to start from (JPEG or PNG, up to 20 MiB): image-to-video")
	f.StringVar(&g.first, "first", "", "first frame (with --last): first-last-frame")
	f.StringVar(&g.last, "last", "", "last frame (with --first)")
	f.StringArrayVar(&g.references, "reference", nil, "reference image whose person, character or product the video keeps: a JPEG or PNG file, or a direct upload's id (upl_...); up to 3, one flag each (text-to-video on models that take them)")
	f.IntVar(&g.samples, "samples", 0, "number of videos, 1 or 2 (default 1)")
	f.StringVar(&g.aspect, "aspect", "", `aspect ratio, "16:9" (default) or "9:16"`)
	g.addExtendFlags(f)
	f.StringVar(&g.resolution, "resolution", "", "720p, 1080p or 4k (default 1080p; lite renders 720p; 4k on quality)")
}

// addExtendFlags adds the request flags an extension takes too: its
// model, aspect ratio and sample count are its task's.
func (g *generateFlags) addExtendFlags(f *pflag.FlagSet) {
	f.IntVar(&g.duration, "duration", 0, "seconds: 4, 6 or 8 (default 8)")
	f.StringVar(&g.negate, "negative", "", "what the video should not show")
	f.BoolVar(&g.noAudio, "no-audio", false, "no audio track (cheaper)")
	f.Int64Var(&g.seed, "seed", 0, "seed, for a reproducible video (default random)")
	f.IntVar(&g.maxCredits, "max-credits", 0, "refuse the start if it would cost more than this many credits (nothing is charged)")
}

func extendCmd(opts *options) *cobra.Command {
	g := &generateFlags{}
	cmd := extensionCmd(opts, g, &cobra.Command{
		Short: "Continue a completed task's video by about 7 seconds, wait for it, save it",
		Long: "Start an extension of the video of one of your completed tasks (a new task of\n" +
			"type video-extension, charged and refunded as any start), show its progress and\n" +
			"save the whole video, the task's and its continuation, into --out. The model and\n" +
			"aspect ratio are the task's. Only Veo extends videos, on the route that made\n" +
			"them, at 720p and 8 seconds: `gen models --json` shows each model's limits\n" +
			"(mode video-extension).\n\n" +
			"Waiting, --no-wait, --wait-timeout and the exit status are generate's.",
	}, generate)
	g.addStartFlags(cmd.Flags())
	return cmd
}

// quoteExtendCmd is `gen quote extend`.
func quoteExtendCmd(opts *options) *cobra.Command {
	return extensionCmd(opts, &generateFlags{progress: "none"}, &cobra.Command{
		Short: "Show what gen extend with the same flags would charge, without starting it",
	}, quote)
}

// extensionCmd completes cmd as `extend TASK_ID "PROMPT"` with the flags
// an extension takes into g, handing its request to run (generate or
// quote).
func extensionCmd(opts *options, g *generateFlags, cmd *cobra.Command,
	run func(*cobra.Command, *options, generateFlags, client.Request) error) *cobra.Command {
	cmd.Use = `extend TASK_ID "PROMPT"`
	cmd.Args = cobra.ExactArgs(2)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		g.extend = args[0]
		req, err := g.request(cmd, args[1])
		if err != nil {
			return err
		}
		return run(cmd, opts, *g, req)
	}
	f := cmd.Flags()
	g.addExtendFlags(f)
	f.StringVar(&g.resolution, "resolution", "", "720p (the default), or what the model's backend extends")
	return cmd
}

// referenceImages are the images --reference names: an existing file, or
// else a direct upload's id.
func (g generateFlags) referenceImages() ([]client.Image, error) {
	var out []client.Image
	for _, ref := range g.references {
		if st, err := os.Stat(ref); err == nil && !st.IsDir() {
			out = append(out, client.ImageFile(ref))
			continue
		}
		if !wire.IsUploadID(ref) {
			return nil, fmt.Errorf("--reference %q: no such file, nor a direct upload's id (upl_ and 32 hex digits)", ref)
		}
		out = append(out, client.UploadedImage(ref))
	}
	return out, nil
}

// extendRequest is req as an extension sends it.
func extendRequest(req client.Request) client.ExtendRequest {
	return client.ExtendRequest{Prompt: req.Prompt, DurationSeconds: req.DurationSeconds, Resolution: req.Resolution,
		GenerateAudio: req.GenerateAudio, EnhancePrompt: req.EnhancePrompt, NegativePrompt: req.NegativePrompt,
		Seed: req.Seed, PersonGeneration: req.PersonGeneration, WebhookURL: req.WebhookURL, MaxCredits: req.MaxCredits}
}

func quoteCmd(opts *options) *cobra.Command {
	g := generateFlags{progress: "none"}
	cmd := &cobra.Command{
		Use:   `quote "PROMPT"`,
		Short: "Show what a generate with the same flags would charge, without starting it",
		Long: "Ask the service what the start of `gen generate` with the same prompt and flags\n" +
			"would charge now, the balance it would leave, and whether a limit would refuse it.\n" +
			"The request is validated exactly as the start would be (images included); nothing\n" +
			"is charged and no task is created. Another request may change the answer.\n\n" +
			"Reference images given as files (--reference) are uploaded first: the quote\n" +
			"takes direct uploads. `gen quote extend TASK_ID \"PROMPT\"` quotes gen extend.",
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
	cmd.AddCommand(quoteExtendCmd(opts))
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
	case g.extend != "":
		q, err = c.QuoteExtend(ctx, g.extend, extendRequest(req))
	case len(g.references) > 0:
		var refs []client.Image
		if refs, err = g.referenceImages(); err == nil {
			q, err = c.QuoteTextToVideoWithReferences(ctx, req, refs)
		}
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
	case len(g.references) > 0 && (g.image != "" || g.first != ""):
		return req, errors.New("--reference goes with a prompt alone (text-to-video), not with --image, --first or --last")
	case len(g.references) > wire.MaxReferenceImages:
		return req, fmt.Errorf("--reference is given %d times; a start takes at most %d reference images", len(g.references), wire.MaxReferenceImages)
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
	case g.extend != "":
		s, err = c.Extend(ctx, g.extend, extendRequest(req), idem)
	case len(g.references) > 0:
		var refs []client.Image
		if refs, err = g.referenceImages(); err == nil {
			s, err = c.TextToVideoWithReferences(ctx, req, refs, idem)
		}
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
