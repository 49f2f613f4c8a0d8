// Command fakeveo runs a fake of the Vertex AI and Gemini APIs that serve
// Veo (shared/testing/veotest), so that the service can be tried, and
// tested, end to end without a Google account:
//
//	go run ./infra/fakeveo -addr 127.0.0.1:8090 -delay 5s
//	GEN_GENERATOR=vertex GEN_VERTEX_ENDPOINT=http://127.0.0.1:8090 \
//	  GEN_VERTEX_PROJECT=demo GEN_VERTEX_ACCESS_TOKEN=fake make run
//
// Its operations finish after -delay with one video per sample, rendered
// from the request by the built-in ffmpeg generator (-render=false: a
// fixed test pattern). Outcomes
// are told per prompt text, at start (-filter, -fail, -refuse, -drop) or
// at any time with POST /fake/rules {"when": "text", "filtered": 1,
// "errorCode": 3, "submitStatus": 429, "retryDelay": "30s", "reason":
// "... Support codes: 29310472", "drop": true, ...}; GET /fake/submits
// lists the submit requests received. -retired names models that answer
// 404 NOT_FOUND, as Google's retired ones do; -storage-addr serves the
// Gemini downloads on a second origin they redirect to, as Google's do.
//
// With -api openai it fakes a host of OpenAI's videos shape instead
// (shared/testing/openaitest), whose jobs take -polls polls with
// rising progress; -profile vllm-omni enforces a vLLM-Omni host's rules;
// -key is then the bearer key; -fail ends a job failed, -refuse refuses
// the prompt by moderation, -drop drops the submit's answer:
//
//	go run ./infra/fakeveo -api openai -addr 127.0.0.1:8090
//	GEN_GENERATOR=openai GEN_OPENAI_PROFILE=openai GEN_OPENAI_ENDPOINT=http://127.0.0.1:8090 \
//	  GEN_OPENAI_API_KEY=fake make run
package main

import (
	"flag"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	delay := flag.Duration("delay", 5*time.Second, "how long an operation runs")
	quota := flag.Int("quota", 0, "submits accepted per -window (0: no limit); the others answer 429")
	window := flag.Duration("window", time.Minute, "the quota's window")
	token := flag.String("token", "", "bearer token Vertex requests must carry (empty: any)")
	key := flag.String("key", "", "x-goog-api-key Gemini requests must carry (empty: any)")
	filter := flag.String("filter", "[filter]", "prompts containing this have one sample filtered")
	filterAll := flag.String("filter-all", "[filter-all]", "prompts containing this have every sample filtered")
	fail := flag.String("fail", "[fail]", "prompts containing this end with INVALID_ARGUMENT")
	refuse := flag.String("refuse", "[refuse]", "prompts containing this are refused at submit with a support code, as Google's safety filters do")
	drop := flag.String("drop", "[drop]", "prompts containing this have their job accepted and the submit's answer dropped")
	retired := flag.String("retired", "", "comma-separated provider model ids that answer 404 NOT_FOUND, as retired models do")
	storageAddr := flag.String("storage-addr", "", "serve the Gemini downloads on this second address, which downloads redirect to (empty: on -addr)")
	renders := flag.Bool("render", true, "render each sample from the request with ffmpeg, as the built-in generator does (false: a fixed one-second test pattern)")
	api := flag.String("api", "google", "which APIs to fake: google (Vertex AI and the Gemini API) or openai (OpenAI's videos shape)")
	profile := flag.String("profile", "openai", "with -api openai, whose rules: openai or vllm-omni")
	polls := flag.Int("polls", 3, "with -api openai, the polls a job takes")
	flag.Parse()

	var renderer veotest.Renderer
	if *renders {
		r, err := render.New(render.Config{})
		if err != nil {
			slog.Error("render with ffmpeg (or run with -render=false)", "error", err)
			os.Exit(1)
		}
		renderer = r
	}
	if *api == "openai" {
		cfg := openaitest.Config{Profile: *profile, Key: *key, Polls: *polls, Renderer: renderer}
		if *retired != "" {
			cfg.Retired = strings.Split(*retired, ",")
		}
		s := openaitest.New(cfg)
		s.When(*fail, openaitest.Outcome{FailCode: "internal_error"})
		s.When(*refuse, openaitest.Outcome{SubmitStatus: 400, Code: openaitest.ModerationCode})
		s.When(*drop, openaitest.Outcome{Drop: true})
		slog.Info("fake OpenAI videos host listening", "addr", *addr, "profile", *profile, "polls", *polls)
		if err := http.ListenAndServe(*addr, s); err != nil {
			slog.Error("serve", "error", err)
			os.Exit(1)
		}
		return
	}
	cfg := veotest.Config{Delay: *delay, SubmitsPerWindow: *quota, Window: *window, Token: *token, APIKey: *key}
	if *retired != "" {
		cfg.Retired = strings.Split(*retired, ",")
	}
	cfg.Renderer = renderer
	s := veotest.New(cfg)
	// The longer text first: "[filter-all]" contains no "[filter]", but
	// an operator's own flags might nest.
	s.When(*filterAll, veotest.Outcome{Filtered: 1 << 10})
	s.When(*filter, veotest.Outcome{Filtered: 1})
	s.When(*fail, veotest.Outcome{ErrorCode: 3})
	s.When(*refuse, veotest.Outcome{SubmitStatus: 400, Reason: veotest.RefusedPrompt})
	s.When(*drop, veotest.Outcome{Drop: true})
	if *storageAddr != "" {
		s.RedirectDownloads("http://" + *storageAddr)
		go func() {
			if err := http.ListenAndServe(*storageAddr, s.Storage()); err != nil {
				slog.Error("serve storage", "error", err)
				os.Exit(1)
			}
		}()
	}
	slog.Info("fake Veo provider listening", "addr", *addr, "delay", delay.String(), "quota", *quota)
	if err := http.ListenAndServe(*addr, s); err != nil {
		slog.Error("serve", "error", err)
		os.Exit(1)
	}
}
