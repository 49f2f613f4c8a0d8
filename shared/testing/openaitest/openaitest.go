// Package openaitest is a fake host of OpenAI's videos shape, for tests
// and for an operator trying the openai generator without a host
// (infra/fakeveo -api openai runs it). It speaks the shape's REST:
// POST /v1/videos (multipart: prompt, model, seconds, size,
// input_reference), GET /v1/videos/{id} (status queued, in_progress,
// completed or failed, with progress), GET /v1/videos/{id}/content, and
// GET /v1/models[/{model}]; errors are OpenAI's {"error": {message,
// type, param, code}}.
//
// Like the host it fakes, it refuses what the host refuses
// (Config.Profile; rules and sources in openaimodels): on OpenAI a model
// it does not serve or retired (404 model_not_found), seconds other than
// 4, 8 and 12, a size the model does not render, and any field the API
// does not define (400 unknown_parameter, as OpenAI answers an unknown
// parameter); on vLLM-Omni, a size or seconds that is not a number.
//
// Jobs run for Config.Polls polls (progress rising to 100), then
// complete with Video, or with what Config.Renderer renders from the
// request. Outcomes are chosen per request by the first rule whose text
// the prompt contains (When): a refusal at submit (any status, 429 with
// Retry-After, for the first Times submits or all), a job that fails
// with a code (moderation_blocked is the host's content refusal), an
// accepted job whose answer is lost (Drop). Every submit is recorded
// with its fields (Submits), every request with its headers (Requests),
// and each job's content downloads are counted (Downloads).
package openaitest

import (
	"bytes"
	"cmp"
	"fmt"
	"image"
	_ "image/jpeg" // input_reference may be a JPEG
	_ "image/png"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/providerfake"
)

// Video is the MP4 of every job without a Renderer (providerfake.Video: one
// second of a test pattern).
var Video = providerfake.Video

// Config configures a Server.
type Config struct {
	// Profile is settings.ProfileOpenAI (or "") or ProfileVLLMOmni:
	// whose rules the fake enforces.
	Profile string
	// Key, when set, is the bearer key every request must carry.
	Key string
	// Polls is how many polls a job stays queued or in progress before
	// it completes; 0 means 2.
	Polls int
	// Renderer, when set, renders each job from the request (the
	// built-in generator); nil means Video.
	Renderer provider.Generator
	// Retired are model ids the host no longer serves (404).
	Retired []string
}

// Outcome is what a submit, and its job, end with.
type Outcome struct {
	// SubmitStatus, when set, refuses the submit with this status and an
	// error of Code (429 with Retry-After RetryAfter seconds, default 1;
	// 400 moderation_blocked is the host's refusal of the prompt).
	SubmitStatus int    `json:"submitStatus,omitempty"`
	Code         string `json:"code,omitempty"`
	RetryAfter   int    `json:"retryAfter,omitempty"`
	// Times, when positive, refuses only the first Times submits of the
	// rule; the next are accepted.
	Times int `json:"times,omitempty"`
	// FailCode ends the job failed with this error code
	// (moderation_blocked: a content refusal; anything else a failure).
	// On the vllm-omni profile a numeric one is sent as a JSON number,
	// as vLLM-Omni may.
	FailCode string `json:"failCode,omitempty"`
	// Drop accepts the job, then closes the connection without an
	// answer: the job runs, and counts as accepted.
	Drop bool `json:"drop,omitempty"`
}

// ModerationCode is the code of the host's content refusals.
const ModerationCode = "moderation_blocked"

// Request is one request the fake received (its Origin is "api").
type Request = providerfake.Request

// Submit is one recorded submit.
type Submit struct {
	Model  string            `json:"model"`
	Fields map[string]string `json:"fields"`
	// Reference is the input_reference's content type, "" without one.
	Reference string `json:"reference,omitempty"`
	// Video is the job's id, "" when refused.
	Video  string `json:"video,omitempty"`
	Status int    `json:"status"`
}

type job struct {
	id, model, size, seconds string
	outcome                  Outcome
	polls, downloads         int
	rendered                 chan struct{} // closed once video or renderErr is set
	video                    []byte
	renderErr                error
}

// Server is the fake, an http.Handler.
type Server struct {
	cfg Config
	mux *http.ServeMux

	providerfake.Base[Outcome, Submit]

	mu   sync.Mutex
	jobs map[string]*job
}

// New returns a fake with cfg.
func New(cfg Config) *Server {
	if cfg.Profile == "" {
		cfg.Profile = settings.ProfileOpenAI
	}
	if cfg.Polls <= 0 {
		cfg.Polls = 2
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), jobs: map[string]*job{}}
	s.mux.HandleFunc("POST /v1/videos", s.create)
	s.mux.HandleFunc("GET /v1/videos/{id}", s.retrieve)
	s.mux.HandleFunc("GET /v1/videos/{id}/content", s.content)
	s.mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		providerfake.WriteJSON(w, 200, map[string]any{"object": "list", "data": []any{}})
	})
	s.mux.HandleFunc("GET /v1/models/{model}", s.model)
	s.Accepts = func(sub Submit) (string, bool) { return sub.Fields["prompt"], sub.Video != "" }
	s.SetRetired(cfg.Retired...)
	s.Handle(s.mux, func(w http.ResponseWriter, msg string) {
		apiError(w, 400, msg, "invalid_request_error", "", "")
	})
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Record("api", r)
	if strings.HasPrefix(r.URL.Path, "/fake/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	if s.cfg.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Key {
		apiError(w, 401, "Incorrect API key provided.", "invalid_request_error", "", "invalid_api_key")
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		apiError(w, 404, "Invalid URL ("+r.Method+" "+r.URL.Path+")", "invalid_request_error", "", "")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Downloads is how many times the content of job id was downloaded.
func (s *Server) Downloads(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		return j.downloads
	}
	return 0
}

// openAIFields are the fields of OpenAI's create video (openaimodels
// [openai-ref]); vLLM-Omni takes more [vllm-omni].
var openAIFields = []string{"prompt", "model", "seconds", "size", "input_reference"}

// soraSizes are the sizes each OpenAI model renders [openai-sizes].
var soraSizes = map[string][]string{
	"sora-2":     {"720x1280", "1280x720"},
	"sora-2-pro": {"720x1280", "1280x720", "1024x1792", "1792x1024"},
}

// refusal is the host's refusal of a submit's fields, status 0 if none.
func (s *Server) refusal(f map[string]string, hasRef bool) (status int, msg, param, code string) {
	if f["prompt"] == "" {
		return 400, "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter"
	}
	if s.cfg.Profile == settings.ProfileVLLMOmni {
		if _, err := strconv.Atoi(cmp.Or(f["seconds"], "4")); err != nil {
			return 400, "seconds must be an integer", "seconds", ""
		}
		if w, h, ok := strings.Cut(cmp.Or(f["size"], "1280x720"), "x"); !ok || !isInt(w) || !isInt(h) {
			return 400, "size must be WIDTHxHEIGHT", "size", ""
		}
		return 0, "", "", ""
	}
	for k := range f {
		if !slices.Contains(openAIFields, k) {
			return 400, fmt.Sprintf("Unknown parameter: '%s'.", k), k, "unknown_parameter"
		}
	}
	model := cmp.Or(f["model"], "sora-2")
	if _, ok := openaimodels.Lookup(settings.ProfileOpenAI, model); !ok || s.Retired(model) {
		return 404, fmt.Sprintf("The model '%s' does not exist or you do not have access to it.", model), "model", "model_not_found"
	}
	if sec := cmp.Or(f["seconds"], "4"); !slices.Contains([]string{"4", "8", "12"}, sec) {
		return 400, fmt.Sprintf("Invalid value: '%s'. Supported values are: '4', '8', and '12'.", sec), "seconds", "invalid_value"
	}
	base, _, _ := strings.Cut(model, "-20") // a dated snapshot renders as its model
	if size := cmp.Or(f["size"], "720x1280"); !slices.Contains(soraSizes[base], size) {
		return 400, fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", size, strings.Join(soraSizes[base], ", ")), "size", "invalid_value"
	}
	return 0, "", "", ""
}

func isInt(s string) bool { _, err := strconv.Atoi(s); return err == nil }

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		apiError(w, 400, "want a multipart/form-data body: "+err.Error(), "invalid_request_error", "", "")
		return
	}
	f := map[string]string{}
	for k, v := range r.MultipartForm.Value {
		f[k] = v[0]
	}
	var ref []byte
	sub := Submit{Model: f["model"], Fields: f}
	if fh := r.MultipartForm.File["input_reference"]; len(fh) > 0 {
		file, err := fh[0].Open()
		if err == nil {
			ref, err = io.ReadAll(file)
			file.Close()
		}
		if err != nil {
			apiError(w, 400, "input_reference: "+err.Error(), "invalid_request_error", "input_reference", "")
			return
		}
		sub.Reference = fh[0].Header.Get("Content-Type")
		if _, _, err := image.DecodeConfig(bytes.NewReader(ref)); err != nil {
			s.refuse(w, sub, 400, "input_reference is not an image", "input_reference", "invalid_value", 0)
			return
		}
	}
	if status, msg, param, code := s.refusal(f, ref != nil); status != 0 {
		s.refuse(w, sub, status, msg, param, code, 0)
		return
	}
	// Times refuses only the rule's first submits; the next are accepted.
	o, used := s.Match(f["prompt"])
	if o.Times > 0 && used > o.Times {
		o.SubmitStatus = 0
	}
	if o.SubmitStatus != 0 {
		code := o.Code
		if o.SubmitStatus == 429 && code == "" {
			code = "rate_limit_exceeded"
		}
		s.refuse(w, sub, o.SubmitStatus, "refused by the fake", "", code, cmp.Or(o.RetryAfter, 1))
		return
	}
	j := &job{id: "video_" + providerfake.NewID(12), model: cmp.Or(f["model"], "sora-2"), size: f["size"], seconds: f["seconds"], outcome: o}
	if s.cfg.Renderer != nil {
		j.rendered = make(chan struct{})
		go s.render(j, f, ref)
	}
	s.mu.Lock()
	s.jobs[j.id] = j
	sub.Video, sub.Status = j.id, 200
	s.mu.Unlock()
	s.Submit(sub)
	if o.Drop {
		providerfake.Drop(w) // the job runs; its answer never arrives
		return
	}
	providerfake.WriteJSON(w, 200, s.object(j, "queued", 0))
}

func (s *Server) refuse(w http.ResponseWriter, sub Submit, status int, msg, param, code string, retryAfter int) {
	sub.Status = status
	s.Submit(sub)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	typ := "invalid_request_error"
	switch {
	case status == 429:
		typ = "requests"
	case status >= 500:
		typ = "server_error"
	}
	apiError(w, status, msg, typ, param, code)
}

func (s *Server) object(j *job, status string, progress int) map[string]any {
	o := map[string]any{"id": j.id, "object": "video", "model": j.model, "status": status, "progress": progress,
		"created_at": 1764000000, "seconds": j.seconds, "size": j.size, "error": nil}
	if status == "failed" {
		code := cmp.Or(j.outcome.FailCode, "internal_error")
		var wire any = code
		if n, err := strconv.Atoi(code); err == nil && s.cfg.Profile == settings.ProfileVLLMOmni {
			// vLLM-Omni's VideoError.code is `int | str`
			// (vllm_omni/entrypoints/openai/protocol/videos.py, read
			// 2026-11-28): a numeric code goes out as a number.
			wire = n
		}
		o["error"] = map[string]any{"code": wire, "message": "the job failed (" + code + ")"}
	}
	return o
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		apiError(w, 404, "Video not found", "invalid_request_error", "video_id", "")
		return
	}
	j.polls++
	polls := j.polls
	s.mu.Unlock()
	switch {
	case polls < s.cfg.Polls || !providerfake.IsClosed(j.rendered):
		status := "in_progress"
		if polls == 1 {
			status = "queued"
		}
		providerfake.WriteJSON(w, 200, s.object(j, status, min(99, polls*100/s.cfg.Polls)))
	case j.outcome.FailCode != "" || j.renderErr != nil:
		providerfake.WriteJSON(w, 200, s.object(j, "failed", 100))
	default:
		providerfake.WriteJSON(w, 200, s.object(j, "completed", 100))
	}
}

func (s *Server) content(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	done := ok && j.polls >= s.cfg.Polls && providerfake.IsClosed(j.rendered) && j.outcome.FailCode == "" && j.renderErr == nil
	if done {
		j.downloads++
	}
	s.mu.Unlock()
	if !done {
		apiError(w, 404, "Video is not ready", "invalid_request_error", "video_id", "")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	if j.video != nil {
		w.Write(j.video)
		return
	}
	w.Write(Video)
}

func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	m := r.PathValue("model")
	if _, ok := openaimodels.Lookup(s.cfg.Profile, m); !ok || s.Retired(m) {
		apiError(w, 404, fmt.Sprintf("The model '%s' does not exist", m), "invalid_request_error", "model", "model_not_found")
		return
	}
	providerfake.WriteJSON(w, 200, map[string]any{"id": m, "object": "model", "owned_by": "openai"})
}

// makesAudio is whether the profile's videos have audio.
func (s *Server) makesAudio() bool {
	l, _ := openaimodels.Lookup(cmp.Or(s.cfg.Profile, settings.ProfileOpenAI), "sora-2")
	return l.Audio.AudioChoices()[0]
}

// render renders j as the built-in generator does, from the request's
// fields, with audio as the profile's models make it (openaimodels:
// Sora always, vLLM-Omni's Wan never).
func (s *Server) render(j *job, f map[string]string, ref []byte) {
	defer close(j.rendered)
	aspect, res, _ := openaimodels.AspectAndResolution(cmp.Or(f["size"], "720x1280"))
	secs, _ := strconv.Atoi(cmp.Or(f["seconds"], "4"))
	video, err := providerfake.RenderAsked(s.cfg.Renderer, providerfake.Asked{ID: j.id, Prompt: f["prompt"], Seconds: secs,
		Aspect: aspect, Resolution: res, Audio: s.makesAudio(), Image: ref})
	if err == nil {
		j.video = video
	}
	j.renderErr = err
}

func apiError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	providerfake.WriteJSON(w, status, map[string]any{"error": e})
}
