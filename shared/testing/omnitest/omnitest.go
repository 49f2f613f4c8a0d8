// Package omnitest is a fake of Gemini Omni Flash on the Interactions
// API, as the Gemini API and Vertex AI serve it, for tests and the local
// stack. It speaks the API's REST as Google's SDK encodes it
// (omnimodels [sdk], [vertex-sdk]):
//
//   - the Gemini API: POST /v1beta/interactions, GET
//     /v1beta/interactions/{id} and GET /v1beta/models/{model}, with the
//     key in x-goog-api-key; errors are the Interactions API's {"error":
//     {code, message}}, the key refused as the Gemini API refuses it (400
//     "API key not valid");
//   - Vertex AI: POST /v1beta1/projects/{project}/locations/{location}/interactions,
//     GET .../interactions/{id} (an interaction is found only under the
//     project and location that made it) and GET
//     /v1/publishers/google/models/{model}, with "Authorization: Bearer
//     {token}"; errors are google.rpc.Status (a numeric code and a status
//     name), as Vertex AI answers its other APIs: which shape its
//     Interactions API's own refusals take is not known first-hand, and
//     the adapter reads both.
//
// An interaction's status is queued, in_progress, completed or failed;
// a completed one's video is in a model_output step, inline base64 or at
// a URI on the fake's own origin (the Gemini API's files).
//
// Like the API it fakes, it refuses what the API refuses (omnimodels):
// a field it does not define, a model it does not serve or retired
// (404), a response_format that is not a video of 3 to 15 seconds at
// one of its resolutions and aspect ratios, a task it does not name, an
// input with no text or an image that is not PNG or JPEG base64; the
// Gemini API's key on Vertex AI (401 [vertex-key]) and a bearer token
// on the Gemini API (the fake's own rule: Vertex's token has no business
// there); gcs_uri on the Gemini API, and on Vertex AI delivery by URI
// without it. It does not write to Cloud Storage: a Vertex start asking
// delivery by URI is refused 501, the fake's limit, not Google's.
//
// Interactions run for Config.Polls polls, then complete with Video.
// Outcomes are chosen per request by the first rule whose text the
// prompt contains (When): a refusal at submit (any status, 429 with
// Retry-After, for the first Times submits or all), an interaction that
// fails with an error (a safety one is the API's refusal), one that
// completes without a video, an accepted one whose answer is lost
// (Drop). Every submit is recorded with its body and API (Submits),
// every request with its headers (Requests).
package omnitest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/testing/providerfake"
)

// Video is the MP4 of every interaction (providerfake.Video).
var Video = providerfake.Video

// Config configures a Server.
type Config struct {
	// Key, when set, is the x-goog-api-key every Gemini API request must
	// carry.
	Key string
	// Token, when set, is the bearer token every Vertex AI request must
	// carry; Project, when set, the one project Vertex AI serves it.
	Token, Project string
	// Polls is how many polls an interaction stays in progress before it
	// ends; 0 means 2.
	Polls int
	// Retired are model ids the API no longer serves (404).
	Retired []string
	// URIVideos delivers the Gemini API's videos at a URI on the fake's
	// origin, which takes the key, rather than inline, when a start asks
	// no delivery.
	URIVideos bool
	// Renderer, when set, renders each interaction's video from its
	// request (prompt, duration, aspect ratio, resolution, image), with
	// audio as Omni's always have, so that a test can probe what a
	// start asked for; without, every interaction completes with Video.
	Renderer provider.Generator
}

// Outcome is what a submit, and its interaction, end with.
type Outcome struct {
	// SubmitStatus, when set, refuses the submit with this status and
	// Reason (429 with Retry-After RetryAfter seconds, default 1; a 400
	// whose reason names safety is the API's refusal of the prompt).
	SubmitStatus int    `json:"submitStatus,omitempty"`
	Reason       string `json:"reason,omitempty"`
	RetryAfter   int    `json:"retryAfter,omitempty"`
	// Times, when positive, refuses only the first Times submits of the
	// rule; the next are accepted.
	Times int `json:"times,omitempty"`
	// FailCode ends the interaction failed with an error of this code
	// and Reason (SafetyCode: a safety refusal).
	FailCode string `json:"failCode,omitempty"`
	// NoVideo completes the interaction with no video.
	NoVideo bool `json:"noVideo,omitempty"`
	// Drop accepts the interaction, then closes the connection without
	// an answer: it runs, and counts as accepted.
	Drop bool `json:"drop,omitempty"`
}

// SafetyCode is the code of the fake's safety refusals. Google documents
// none for Omni (infra/docs/providers.md): it names safety, as the
// adapter reads a refusal.
const SafetyCode = "SAFETY"

// Request is one request the fake received.
type Request = providerfake.Request

// Create is a create interaction's body, every field the API defines
// for a model interaction (omnimodels [sdk]); the fake refuses others.
type Create struct {
	Model                 string            `json:"model"`
	Input                 json.RawMessage   `json:"input"`
	Background            *bool             `json:"background,omitempty"`
	GenerationConfig      *GenerationConfig `json:"generation_config,omitempty"`
	ResponseFormat        json.RawMessage   `json:"response_format,omitempty"`
	PreviousInteractionID string            `json:"previous_interaction_id,omitempty"`
	Store                 *bool             `json:"store,omitempty"`
	Stream                *bool             `json:"stream,omitempty"`
	SystemInstruction     string            `json:"system_instruction,omitempty"`
	Labels                map[string]string `json:"labels,omitempty"`
	ResponseModalities    []string          `json:"response_modalities,omitempty"`
	ServiceTier           string            `json:"service_tier,omitempty"`
	SafetySettings        json.RawMessage   `json:"safety_settings,omitempty"`
	Tools                 json.RawMessage   `json:"tools,omitempty"`
	Environment           json.RawMessage   `json:"environment,omitempty"`
	WebhookConfig         json.RawMessage   `json:"webhook_config,omitempty"`
	ResponseMimeType      string            `json:"response_mime_type,omitempty"`
}

// GenerationConfig is the fields of generation_config video takes.
type GenerationConfig struct {
	Seed            *int64 `json:"seed,omitempty"`
	MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
	VideoConfig     *struct {
		Task string `json:"task,omitempty"`
	} `json:"video_config,omitempty"`
	ThinkingLevel string `json:"thinking_level,omitempty"`
}

// Content is one content block of the input.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
}

// Format is a video response_format.
type Format struct {
	Type        string `json:"type"`
	AspectRatio string `json:"aspect_ratio,omitempty"`
	Resolution  string `json:"resolution,omitempty"`
	Duration    string `json:"duration,omitempty"`
	Delivery    string `json:"delivery,omitempty"`
	GCSURI      string `json:"gcs_uri,omitempty"`
}

// The APIs a Submit names.
const (
	Gemini = "gemini"
	Vertex = "vertex"
)

// Submit is one recorded submit: the API it came to, the prompt, what
// the request asked (the video's format, task, seed and images), and
// the interaction's id ("" when refused).
type Submit struct {
	API        string `json:"api"`
	Model      string `json:"model"`
	Prompt     string `json:"prompt"`
	Background bool   `json:"background"`
	Format     Format `json:"format"`
	Task       string `json:"task,omitempty"`
	Seed       *int64 `json:"seed,omitempty"`
	// Images are the input images' MIME types.
	Images      []string `json:"images,omitempty"`
	Interaction string   `json:"interaction,omitempty"`
	Status      int      `json:"status"`
}

type interaction struct {
	id      string
	at      where
	input   []Content
	outcome Outcome
	// delivery is what the start asked: inline, uri, or "".
	delivery string
	polls    int
	// video is what Config.Renderer made of the request; nil is Video.
	video []byte
}

// mp4 is the interaction's video.
func (in *interaction) mp4() []byte {
	if in.video != nil {
		return in.video
	}
	return Video
}

// render renders sub as the built-in generator does, audio always
// (omnimodels), from the request's own fields.
func (s *Server) render(in *interaction, sub Submit) {
	secs, _ := omnimodels.Seconds(cmp.Or(sub.Format.Duration, "8s"))
	a := providerfake.Asked{ID: in.id, Prompt: sub.Prompt, Seconds: secs, Aspect: cmp.Or(sub.Format.AspectRatio, "16:9"),
		Resolution: cmp.Or(sub.Format.Resolution, "720p"), Audio: true}
	for _, c := range in.input {
		if c.Type == "image" {
			a.Image, _ = base64.StdEncoding.DecodeString(c.Data)
			break
		}
	}
	in.video, _ = providerfake.RenderAsked(s.cfg.Renderer, a)
}

// where is the API a request came to: the Gemini API, or Vertex AI in a
// project and location.
type where struct {
	api, project, location string
}

// Server is the fake, an http.Handler.
type Server struct {
	cfg Config
	mux *http.ServeMux

	providerfake.Base[Outcome, Submit]

	mu           sync.Mutex
	interactions map[string]*interaction
}

// New returns a fake with cfg.
func New(cfg Config) *Server {
	if cfg.Polls <= 0 {
		cfg.Polls = 2
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), interactions: map[string]*interaction{}}
	gemini := func(*http.Request) where { return where{api: Gemini} }
	vertex := func(r *http.Request) where {
		return where{api: Vertex, project: r.PathValue("project"), location: r.PathValue("location")}
	}
	s.mux.HandleFunc("POST /v1beta/interactions", s.create(gemini))
	s.mux.HandleFunc("GET /v1beta/interactions/{id}", s.get(gemini))
	s.mux.HandleFunc("GET /v1beta/models/{model}", s.model(Gemini))
	s.mux.HandleFunc("GET /v1beta/files/{id}", s.file)
	const vertexBase = "/v1beta1/projects/{project}/locations/{location}/interactions"
	s.mux.HandleFunc("POST "+vertexBase, s.create(vertex))
	s.mux.HandleFunc("GET "+vertexBase+"/{id}", s.get(vertex))
	s.mux.HandleFunc("GET /v1/publishers/google/models/{model}", s.model(Vertex))
	s.Accepts = func(sub Submit) (string, bool) { return sub.Prompt, sub.Interaction != "" }
	s.SetRetired(cfg.Retired...)
	s.Handle(s.mux, func(w http.ResponseWriter, msg string) { apiError(w, 400, msg) })
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Record("api", r)
	if strings.HasPrefix(r.URL.Path, "/fake/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	onVertex := strings.HasPrefix(r.URL.Path, "/v1beta1/") || strings.HasPrefix(r.URL.Path, "/v1/")
	if onVertex {
		if !s.vertexAuth(w, r) {
			return
		}
	} else if !s.geminiAuth(w, r) {
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		refuse(w, onVertex, 404, "Method not found: "+r.Method+" "+r.URL.Path)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// geminiAuth refuses a Gemini API request without the key, or with a
// bearer token (the fake's rule: only Vertex AI's requests carry one).
func (s *Server) geminiAuth(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case r.URL.Query().Get("key") != "":
		apiError(w, 400, "the fake takes the key in x-goog-api-key only: a key in a URL ends up in logs")
	case r.Header.Get("Authorization") != "":
		apiError(w, 403, "the fake's Gemini API takes its key, not a bearer token: Vertex AI's credentials went to the Gemini API")
	case s.cfg.Key != "" && r.Header.Get("x-goog-api-key") != s.cfg.Key:
		apiError(w, 400, "API key not valid. Please pass a valid API key.")
	default:
		return true
	}
	return false
}

// vertexAuth refuses a Vertex AI request that carries an API key
// ([vertex-key]), lacks the bearer token, or names another project.
func (s *Server) vertexAuth(w http.ResponseWriter, r *http.Request) bool {
	project := ""
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta1/projects/"); ok {
		project, _, _ = strings.Cut(rest, "/")
	}
	switch {
	case r.Header.Get("x-goog-api-key") != "" || r.URL.Query().Get("key") != "":
		rpcError(w, 401, "API keys are not supported by this API. Expected OAuth2 access token or other authentication "+
			"credentials that assert a principal. See https://cloud.google.com/docs/authentication")
	case s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token:
		rpcError(w, 401, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "+
			"or other valid authentication credential.")
	case s.cfg.Project != "" && project != "" && project != s.cfg.Project:
		rpcError(w, 403, "Permission denied on resource project "+project+".")
	default:
		return true
	}
	return false
}

func (s *Server) served(model string) bool {
	_, ok := omnimodels.Lookup(model)
	return ok && !s.Retired(model)
}

// refusal is the API's refusal of a create's body, status 0 if none;
// sub is filled with what the body asks.
func (s *Server) refusal(c Create, sub *Submit) (int, string) {
	if c.Model == "" {
		return 400, "model is required"
	}
	if !s.served(c.Model) {
		return 404, notFound(sub.API, c.Model)
	}
	var input []Content
	var text string
	if json.Unmarshal(c.Input, &text) == nil {
		input = []Content{{Type: "text", Text: text}}
	} else if err := strictDecode(c.Input, &input); err != nil {
		return 400, "input: " + err.Error()
	}
	for _, in := range input {
		switch in.Type {
		case "text":
			sub.Prompt += in.Text
		case "image":
			b, err := base64.StdEncoding.DecodeString(in.Data)
			if in.URI == "" && (err != nil || len(b) == 0) {
				return 400, "input: an image's data is not base64"
			}
			if in.MimeType != "image/png" && in.MimeType != "image/jpeg" && in.MimeType != "image/webp" {
				return 400, fmt.Sprintf("input: image mime_type %q is not supported", in.MimeType)
			}
			sub.Images = append(sub.Images, in.MimeType)
		default:
			return 400, fmt.Sprintf("input: content type %q is not taken here", in.Type)
		}
	}
	if strings.TrimSpace(sub.Prompt) == "" {
		return 400, "input: a video needs a text prompt"
	}
	var f Format
	if len(c.ResponseFormat) > 0 {
		if err := strictDecode(c.ResponseFormat, &f); err != nil {
			return 400, "response_format: " + err.Error()
		}
	}
	sub.Format = f
	if f.Type != "video" {
		return 400, fmt.Sprintf("response_format.type %q: want video", f.Type)
	}
	if f.AspectRatio != "" && !slices.Contains(omnimodels.AspectRatios, f.AspectRatio) {
		return 400, fmt.Sprintf("response_format.aspect_ratio %q: supported values are %s", f.AspectRatio, strings.Join(omnimodels.AspectRatios, ", "))
	}
	if f.Resolution != "" && !slices.Contains(omnimodels.Resolutions, f.Resolution) {
		return 400, fmt.Sprintf("response_format.resolution %q: supported values are %s", f.Resolution, strings.Join(omnimodels.Resolutions, ", "))
	}
	if f.Duration != "" {
		d, ok := omnimodels.Seconds(f.Duration)
		if !ok || d < omnimodels.MinSeconds || d > omnimodels.MaxSeconds {
			return 400, fmt.Sprintf("response_format.duration %q: want %ds to %ds", f.Duration, omnimodels.MinSeconds, omnimodels.MaxSeconds)
		}
	}
	if f.Delivery != "" && !slices.Contains(omnimodels.Deliveries, f.Delivery) {
		return 400, fmt.Sprintf("response_format.delivery %q: supported values are %s", f.Delivery, strings.Join(omnimodels.Deliveries, ", "))
	}
	switch {
	case sub.API == Gemini && f.GCSURI != "":
		return 400, "response_format.gcs_uri is Vertex AI's: the Gemini API does not take it"
	case sub.API == Vertex && f.Delivery == "uri" && f.GCSURI == "":
		return 400, "response_format.gcs_uri is required on Vertex AI when delivery is uri"
	case sub.API == Vertex && f.GCSURI != "" && !strings.HasPrefix(f.GCSURI, "gs://"):
		return 400, fmt.Sprintf("response_format.gcs_uri %q: want gs://bucket/prefix", f.GCSURI)
	case sub.API == Vertex && f.Delivery == "uri":
		return 501, "the fake does not write to Cloud Storage: ask delivery inline"
	}
	if g := c.GenerationConfig; g != nil {
		sub.Seed = g.Seed
		if g.VideoConfig != nil {
			sub.Task = g.VideoConfig.Task
			if sub.Task != "" && !slices.Contains(omnimodels.Tasks, sub.Task) {
				return 400, fmt.Sprintf("generation_config.video_config.task %q: supported values are %s", sub.Task, strings.Join(omnimodels.Tasks, ", "))
			}
		}
	}
	if sub.Task == "image_to_video" && len(sub.Images) == 0 {
		return 400, "image_to_video needs an input image"
	}
	return 0, ""
}

// notFound is the API's message for a model it does not serve: the
// Gemini API's as the SDK's tests meet it, Vertex AI's as its
// publisher models are named.
func notFound(api, model string) string {
	if api == Vertex {
		return fmt.Sprintf("Publisher Model `publishers/google/models/%s` was not found or your project does not have access to it.", model)
	}
	return fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for interactions.", model)
}

func (s *Server) create(at func(*http.Request) where) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.createAt(w, r, at(r)) }
}

func (s *Server) createAt(w http.ResponseWriter, r *http.Request, at where) {
	sub := Submit{API: at.api}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(r.Body); err != nil {
		refuse(w, at.api == Vertex, 400, "body: "+err.Error())
		return
	}
	var c Create
	if err := strictDecode(raw.Bytes(), &c); err != nil {
		s.refuse(w, sub, 400, "Invalid JSON payload received: "+err.Error(), 0)
		return
	}
	sub.Model = c.Model
	sub.Background = c.Background != nil && *c.Background
	if status, msg := s.refusal(c, &sub); status != 0 {
		s.refuse(w, sub, status, msg, 0)
		return
	}
	// Times refuses only the rule's first submits; the next are accepted.
	o, used := s.Match(sub.Prompt)
	if o.Times > 0 && used > o.Times {
		o.SubmitStatus = 0
	}
	if o.SubmitStatus != 0 {
		after := 0
		if o.SubmitStatus == 429 {
			after = max(o.RetryAfter, 1)
		}
		s.refuse(w, sub, o.SubmitStatus, "refused by the fake: "+o.Reason, after)
		return
	}
	var input []Content
	if json.Unmarshal(c.Input, &input) != nil {
		input = []Content{{Type: "text", Text: sub.Prompt}}
	}
	in := &interaction{id: "v1_" + providerfake.NewID(12), at: at, input: input, outcome: o, delivery: sub.Format.Delivery}
	if s.cfg.Renderer != nil && !o.Drop && o.FailCode == "" && !o.NoVideo {
		s.render(in, sub)
	}
	s.mu.Lock()
	s.interactions[in.id] = in
	s.mu.Unlock()
	sub.Interaction, sub.Status = in.id, 200
	s.Submit(sub)
	if o.Drop {
		providerfake.Drop(w) // the interaction runs; its answer never arrives
		return
	}
	status := "in_progress"
	if !sub.Background {
		// Without background the API answers once the video is made:
		// the fake ends it at once.
		in.polls = s.cfg.Polls
		status = "completed"
		if o.FailCode != "" {
			status = "failed"
		}
	}
	providerfake.WriteJSON(w, 200, s.object(r, in, status))
}

// strictDecode decodes b into v, refusing a field v does not define, as
// the API refuses an unknown field.
func strictDecode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func (s *Server) refuse(w http.ResponseWriter, sub Submit, status int, msg string, retryAfter int) {
	sub.Status = status
	s.Submit(sub)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	refuse(w, sub.API == Vertex, status, msg)
}

// object is the Interaction the API answers for in, at status.
func (s *Server) object(r *http.Request, in *interaction, status string) map[string]any {
	o := map[string]any{"id": in.id, "status": status, "created": "2026-11-28T00:00:00Z",
		"steps": []any{map[string]any{"type": "user_input", "content": in.input}}}
	switch status {
	case "failed":
		o["errors"] = []any{map[string]any{"code": in.outcome.FailCode, "message": "the interaction failed (" + in.outcome.FailCode + "): " + in.outcome.Reason}}
	case "completed":
		if in.outcome.NoVideo {
			break
		}
		video := map[string]any{"type": "video", "mime_type": "video/mp4"}
		// A delivery not asked is the fake's choice: URIVideos on the
		// Gemini API, inline on Vertex AI (which writes a URI's video to
		// Cloud Storage, refused at create).
		if in.delivery == "uri" || in.delivery == "" && in.at.api == Gemini && s.cfg.URIVideos {
			video["uri"] = "http://" + r.Host + "/v1beta/files/" + in.id + ":download?alt=media"
		} else {
			video["data"] = base64.StdEncoding.EncodeToString(in.mp4())
		}
		o["steps"] = append(o["steps"].([]any), map[string]any{"type": "model_output", "content": []any{video}})
		o["usage"] = map[string]any{"total_output_tokens": 5792}
	}
	return o
}

func (s *Server) get(at func(*http.Request) where) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.getAt(w, r, at(r)) }
}

func (s *Server) getAt(w http.ResponseWriter, r *http.Request, at where) {
	s.mu.Lock()
	in, ok := s.interactions[r.PathValue("id")]
	if !ok || in.at != at {
		s.mu.Unlock()
		refuse(w, at.api == Vertex, 404, "interaction not found")
		return
	}
	in.polls++
	polls := in.polls
	s.mu.Unlock()
	switch {
	case polls < s.cfg.Polls:
		providerfake.WriteJSON(w, 200, s.object(r, in, "in_progress"))
	case in.outcome.FailCode != "":
		providerfake.WriteJSON(w, 200, s.object(r, in, "failed"))
	default:
		providerfake.WriteJSON(w, 200, s.object(r, in, "completed"))
	}
}

// file serves a video delivered by URI: files/{id}:download.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	id, _ := strings.CutSuffix(r.PathValue("id"), ":download")
	s.mu.Lock()
	in, ok := s.interactions[id]
	done := ok && in.at.api == Gemini && in.polls >= s.cfg.Polls && in.outcome.FailCode == "" && !in.outcome.NoVideo
	s.mu.Unlock()
	if !done {
		apiError(w, 404, "file not found")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(in.mp4())
}

// model answers a model's metadata: the Gemini API's models.get, or
// Vertex AI's publishers.models.get.
func (s *Server) model(api string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := r.PathValue("model")
		if !s.served(m) {
			refuse(w, api == Vertex, 404, notFound(api, m))
			return
		}
		name := "models/" + m
		if api == Vertex {
			name = "publishers/google/models/" + m
		}
		providerfake.WriteJSON(w, 200, map[string]any{"name": name, "displayName": m})
	}
}

// statusNames are the google.rpc codes the fake's errors name.
var statusNames = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

// refuse answers an error in the shape of the API the request came to.
func refuse(w http.ResponseWriter, vertex bool, status int, msg string) {
	if vertex {
		rpcError(w, status, msg)
		return
	}
	apiError(w, status, msg)
}

// rpcError answers a google.rpc.Status, as Vertex AI answers an error
// (https://cloud.google.com/apis/design/errors, read 2026-11-26): its
// code the HTTP status, its status the code's name.
func rpcError(w http.ResponseWriter, status int, msg string) {
	providerfake.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": statusName(status)}})
}

func statusName(status int) string {
	if n := statusNames[status]; n != "" {
		return n
	}
	return "UNKNOWN"
}

// apiError answers the Interactions API's error, {"error": {code,
// message}} (omnimodels [sdk]); Google documents no values of its code,
// so the fake names the google.rpc code.
func apiError(w http.ResponseWriter, status int, msg string) {
	providerfake.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": statusName(status), "message": msg}})
}
