// Package costmodel estimates what AWS charges per 1,000 generations of
// the deployed stack, per generator, from the stack's own figures (its
// functions' memory and the provider poll interval, read from
// template.yaml) and stated assumptions about a generation (how long the
// provider works, how long each step runs, how often the client polls).
// `make bench` prints it; infra/docs/deploy.md quotes it. Provider
// charges (Google's per-second Veo prices) are not AWS's and not here.
package costmodel

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/genvideo/gen/infra/awslocal/samtemplate"
)

// Prices are AWS's public prices in us-east-1, as published when this was
// written (2026-11-26): Step Functions Standard
// (https://aws.amazon.com/step-functions/pricing/), Lambda arm64
// (https://aws.amazon.com/lambda/pricing/), API Gateway REST
// (https://aws.amazon.com/api-gateway/pricing/), DynamoDB on-demand
// (https://aws.amazon.com/dynamodb/pricing/on-demand/), S3 Standard and
// data transfer out (https://aws.amazon.com/s3/pricing/), CloudWatch Logs
// (https://aws.amazon.com/cloudwatch/pricing/).
type Prices struct {
	Transition    float64 // per state transition
	GBSecond      float64 // Lambda arm64, per GB-second
	Invocation    float64 // Lambda, per request
	APIRequest    float64 // API Gateway REST, per request
	WriteUnit     float64 // DynamoDB on-demand, per WRU
	ReadUnit      float64 // per RRU
	S3Put, S3Get  float64 // per request
	S3GBMonth     float64 // storage
	TransferOutGB float64 // data transfer out to the Internet
	LogsGB        float64 // CloudWatch Logs ingestion
}

// USEast1 is Prices in us-east-1.
var USEast1 = Prices{
	Transition: 0.025 / 1000, GBSecond: 0.0000133334, Invocation: 0.20 / 1e6, APIRequest: 3.50 / 1e6,
	WriteUnit: 0.625 / 1e6, ReadUnit: 0.125 / 1e6, S3Put: 0.005 / 1000, S3Get: 0.0004 / 1000,
	S3GBMonth: 0.023, TransferOutGB: 0.09, LogsGB: 0.50,
}

// Stack is what the deployment decides: the workflow's memory sizes and
// the provider poll interval.
type Stack struct {
	// RenderMB is Generate's memory with the built-in renderer, SubmitMB
	// with a provider (it submits, or renders and polls where one function
	// does both), PollMB the Poll function's (0: Generate polls).
	RenderMB, SubmitMB, PollMB int
	PollInterval               time.Duration
}

// Generation is what is assumed of one generation: text-to-video, one
// 8-second video, the client polling status every ClientPoll and calling
// download and fetching the MP4 once.
type Generation struct {
	Render   time.Duration // the built-in renderer's render (1080p, on Lambda's CPU at RenderMB)
	Provider time.Duration // how long the provider works on the job
	Submit   time.Duration // a provider submit (inputs read, the request sent)
	Poll     time.Duration // a poll that finds the job still running, at 256 MB
	Store    time.Duration // the last poll: the videos fetched and stored in S3, at 256 MB
	// FastPoll and FastStore are Poll and Store with a whole vCPU or more
	// (1,769 MB up), where TLS and the copy run several times faster.
	FastPoll, FastStore time.Duration
	VideoMB             float64 // the MP4
	// ClientPoll is the client's wait between status calls (the
	// Retry-After the service sends).
	ClientPoll time.Duration
}

// Assumed is the generation the figures assume. The provider's 90 s is
// what the issue measured (32 transitions at a 10 s poll); the step times
// are Lambda's at the memory each runs with.
var Assumed = Generation{
	Render: 25 * time.Second, Provider: 90 * time.Second,
	Submit: time.Second, Poll: 500 * time.Millisecond, Store: 6 * time.Second,
	FastPoll: 300 * time.Millisecond, FastStore: 3 * time.Second,
	VideoMB: 1.3, ClientPoll: 5 * time.Second,
}

// Line is one item of an estimate: what it counts and its cost per
// generation in dollars.
type Line struct {
	Item, Count string
	Dollars     float64
}

// Estimate is the cost of one generation, item by item.
type Estimate struct {
	Name  string
	Lines []Line
}

// Total is the estimate's cost per generation.
func (e Estimate) Total() float64 {
	t := 0.0
	for _, l := range e.Lines {
		t += l.Dollars
	}
	return t
}

// PerThousand is the cost of 1,000 generations.
func (e Estimate) PerThousand() float64 { return e.Total() * 1000 }

// Builtin estimates a generation rendered by the built-in renderer.
func Builtin(s Stack, g Generation, p Prices) Estimate {
	e := Estimate{Name: "builtin"}
	// MarkProcessing, IsProcessing, Generate, IsGenerated, Complete.
	e.workflow(p, 5, []step{{"Generate (render)", s.RenderMB, g.Render, 1}})
	e.common(p, g, g.Render)
	return e
}

// Provider estimates a generation by a provider (Veo): Generate submits,
// then each poll is WaitForProvider, Poll (or Generate, where
// PollMB is 0) and IsGenerated: three transitions and a run.
func Provider(name string, s Stack, g Generation, p Prices) Estimate {
	e := Estimate{Name: name}
	polls := int(math.Ceil(g.Provider.Seconds() / s.PollInterval.Seconds()))
	pollMB := s.PollMB
	if pollMB == 0 {
		pollMB = s.SubmitMB
	}
	poll, store := g.Poll, g.Store
	if pollMB >= 1769 {
		poll, store = g.FastPoll, g.FastStore
	}
	e.workflow(p, 5+3*polls, []step{
		{"Generate (submit)", s.SubmitMB, g.Submit, 1},
		{"polls still running", pollMB, poll, polls - 1},
		{"last poll (videos to S3)", pollMB, store, 1},
	})
	// The client sees the video done at the first poll after the
	// provider finished.
	e.common(p, g, time.Duration(polls)*s.PollInterval)
	return e
}

type step struct {
	name string
	mb   int
	d    time.Duration
	runs int
}

func (e *Estimate) workflow(p Prices, transitions int, steps []step) {
	e.Lines = append(e.Lines, Line{"Step Functions state transitions", fmt.Sprint(transitions), float64(transitions) * p.Transition})
	runs := 2 // MarkProcessing and Complete
	gbs := 2 * 0.25 * 0.1
	for _, s := range steps {
		g := float64(s.mb) / 1024 * s.d.Seconds() * float64(s.runs)
		e.Lines = append(e.Lines, Line{"Lambda, " + s.name, fmt.Sprintf("%d × %d MB × %.1f s = %.2f GB-s", s.runs, s.mb, s.d.Seconds(), g), g * p.GBSecond})
		runs += s.runs
	}
	e.Lines = append(e.Lines, Line{"Lambda, MarkProcessing and Complete", "2 × 256 MB × 0.1 s", gbs * p.GBSecond},
		Line{"Lambda requests, workflow", fmt.Sprint(runs), float64(runs) * p.Invocation})
}

// common is what every generation costs beside its workflow: the
// client's requests through API Gateway (start, the status polls until
// done, download), their functions and DynamoDB units, the video in S3
// and out to the client, logs. The DynamoDB units are the existing
// table's (infra/docs/deploy.md): 48 WRU and 31 RRU for 8 polls, 1.5 of
// each per poll more.
func (e *Estimate) common(p Prices, g Generation, done time.Duration) {
	polls := int(math.Ceil(done.Seconds() / g.ClientPoll.Seconds()))
	requests := polls + 2
	gbs := float64(requests) * 0.25 * 0.06
	wru, rru := 48+1.5*float64(polls-8), 31+1.5*float64(polls-8)
	gb := g.VideoMB / 1024
	e.Lines = append(e.Lines,
		Line{"API Gateway", fmt.Sprintf("%d requests (%d status polls)", requests, polls), float64(requests) * p.APIRequest},
		Line{"Lambda, API functions", fmt.Sprintf("%d × 256 MB × 60 ms", requests), gbs*p.GBSecond + float64(requests)*p.Invocation},
		Line{"DynamoDB", fmt.Sprintf("%.0f WRU, %.0f RRU", wru, rru), wru*p.WriteUnit + rru*p.ReadUnit},
		Line{"S3 requests", "1 PUT, 1 GET", p.S3Put + p.S3Get},
		Line{"S3 storage", fmt.Sprintf("%.1f MB for 30 days", g.VideoMB), gb * p.S3GBMonth},
		Line{"data transfer out", fmt.Sprintf("%.1f MB", g.VideoMB), gb * p.TransferOutGB},
		Line{"CloudWatch Logs", "~30 KB", 30.0 / 1024 / 1024 * p.LogsGB},
	)
}

// Before is the stack before issue 24: Generate polled Veo itself at
// 3,008 MB every 10 s.
var Before = Stack{RenderMB: 3008, SubmitMB: 3008, PollMB: 0, PollInterval: 10 * time.Second}

// FromTemplate reads the stack's figures from template.yaml at root (the
// parameters' defaults; Generator=vertex for the submit's memory).
func FromTemplate(root string) (Stack, error) {
	var s Stack
	mem := func(generator string) (map[string]int, string, error) {
		tp, err := samtemplate.Load(filepath.Join(root, "template.yaml"), samtemplate.Names{StackName: "gen", Region: "us-east-1",
			Account: "123456789012", Parameters: map[string]string{"FFmpegLayerArn": "arn:aws:lambda:us-east-1:123456789012:layer:x:1", "Generator": generator}})
		if err != nil {
			return nil, "", err
		}
		out := map[string]int{}
		interval := ""
		for _, f := range tp.Functions {
			out[f.LogicalID] = f.MemorySize
			if v, ok := f.Env["GEN_PROVIDER_POLL_INTERVAL"]; ok {
				interval = v
			}
		}
		return out, interval, nil
	}
	builtin, _, err := mem("builtin")
	if err != nil {
		return s, err
	}
	vertex, interval, err := mem("vertex")
	if err != nil {
		return s, err
	}
	s.RenderMB, s.SubmitMB, s.PollMB = builtin["GenerateFunction"], vertex["GenerateFunction"], vertex["PollFunction"]
	if s.PollInterval, err = time.ParseDuration(strings.TrimSpace(interval)); err != nil {
		return s, fmt.Errorf("ProviderPollInterval %q: %w", interval, err)
	}
	if s.RenderMB == 0 || s.SubmitMB == 0 {
		return s, fmt.Errorf("template.yaml: no memory size for GenerateFunction")
	}
	return s, nil
}

// Print writes the estimates per 1,000 generations: the built-in
// renderer, Veo as the stack polls it now, as it polled before, and now at
// other poll intervals.
func Print(w io.Writer, s Stack, g Generation, p Prices) {
	fmt.Fprintf(w, "AWS cost per 1,000 generations (us-east-1 list prices; %s)\n", assumptions(s, g))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	now := Provider("veo", s, g, p)
	before := Provider("veo before", Before, g, p)
	for _, e := range []Estimate{Builtin(s, g, p), now, before} {
		fmt.Fprintf(tw, "%s\t$%.2f\t\n", e.Name, e.PerThousand())
		for _, l := range e.Lines {
			fmt.Fprintf(tw, "  %s\t$%.3f\t%s\n", l.Item, l.Dollars*1000, l.Count)
		}
	}
	fmt.Fprintf(tw, "veo now / before\t%.0f%%\t\n", 100*now.Total()/before.Total())
	for _, iv := range []time.Duration{15 * time.Second, 30 * time.Second, 45 * time.Second, time.Minute} {
		alt := s
		alt.PollInterval = iv
		fmt.Fprintf(tw, "veo polled every %s\t$%.2f\t\n", iv, Provider("", alt, g, p).PerThousand())
	}
	tw.Flush()
}

func assumptions(s Stack, g Generation) string {
	return fmt.Sprintf("Generate %d MB to render, %d MB to submit; Poll %d MB every %s; render %s, provider %s, client polls every %s, %.1f MB video",
		s.RenderMB, s.SubmitMB, s.PollMB, s.PollInterval, g.Render, g.Provider, g.ClientPoll, g.VideoMB)
}
