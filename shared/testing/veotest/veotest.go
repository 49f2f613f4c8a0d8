// Package veotest is a fake of the two APIs that serve Google's Veo
// models, for tests and for an operator trying the service without a
// Google account (infra/fakeveo runs it). It speaks their REST shapes:
//
//   - Vertex AI: POST /v1/projects/{p}/locations/{l}/publishers/google/
//     models/{model}:predictLongRunning, then :fetchPredictOperation with
//     {"operationName"}; videos come back as bytesBase64Encoded, or as
//     gcsUri objects (served at /storage/v1/b/{bucket}/o/{object}?alt=media)
//     when the request has parameters.storageUri.
//   - Gemini API: POST /v1beta/models/{model}:predictLongRunning with
//     x-goog-api-key, then GET /v1beta/{operation name}; videos are file
//     URIs downloaded with the key.
//
// Like Google, it refuses what the model cannot honour (Refusal: the
// table of shared/provider/veo/veomodels, with its sources): 404 NOT_FOUND for a
// model the API does not serve or has retired, 400 INVALID_ARGUMENT for
// a parameter outside the model's documented limits.
//
// Operations finish after Config.Delay, with Video for every sample, or
// with what Config.Renderer renders from the request (the built-in ffmpeg
// generator: then the videos follow the parameters and images as the
// built-in stack's do, and the end-to-end suite's checks of them hold).
// Outcomes are chosen per request
// by the first rule whose text the prompt contains (When), else the
// default: videos for every sample. Submits beyond Config.SubmitsPerWindow
// in a Config.Window answer 429 RESOURCE_EXHAUSTED, as a project's quota
// does, with Google's hint in error.details (google.rpc.RetryInfo).
// Every submit is recorded (Submits) with its decoded body, and every
// request with its headers and the origin it reached (Requests):
// Gemini downloads can redirect to a second origin (Storage), as
// Google's file downloads do, so that a test sees which headers left
// the API's origin.
//
// Errors are google.rpc.Status answers. What Google does, and the fake
// with it:
//   - a safety refusal at submit is a 400 INVALID_ARGUMENT whose message
//     carries "Support codes: NNNNNNNN"; a refusal after submit is an
//     operation done with such an error, or fewer videos than asked with
//     raiMediaFilteredCount ("Responsible AI and usage guidelines for
//     Veo", https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/video/responsible-ai-and-usage-guidelines,
//     read 2026-11-26);
//   - a retired model answers 404 NOT_FOUND (Config.Retired);
//   - a submit can be accepted and its answer lost (Outcome.Drop,
//     Outcome.Truncate): the job runs, and is counted, all the same.
package veotest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/providerfake"
)

// Video is the MP4 every generated sample is (providerfake.Video).
var Video = providerfake.Video

// Config configures a Server.
type Config struct {
	// Delay is how long an operation runs before it is done.
	Delay time.Duration
	// SubmitsPerWindow, when positive, is how many submits the fake
	// accepts per Window (default a minute); the others answer 429.
	SubmitsPerWindow int
	Window           time.Duration
	// Token, when set, is the bearer token Vertex requests must carry;
	// APIKey the x-goog-api-key Gemini requests must carry.
	Token, APIKey string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Renderer, when set, renders each sample from the request
	// (render.Renderer); nil means Video for every sample.
	Renderer Renderer
	// Retired are provider model ids Google no longer serves: their
	// submits and metadata answer 404 NOT_FOUND "... is no longer
	// available".
	Retired []string
	// InlineVideos makes the Gemini API answer each video in its
	// operation (encodedVideo) instead of as a file URI.
	InlineVideos bool
	// Video, when set, is every sample's bytes without a Renderer,
	// instead of Video: a large one makes an answer with inline videos
	// as large as Google's can be. Inline videos are streamed into the
	// answer, so that the fake holds no copy of them.
	Video []byte
}

// Renderer renders the videos of a job, as the built-in generator does.
type Renderer = provider.Generator

// Outcome is what an operation ends with.
type Outcome struct {
	// Filtered samples are held back by the "safety filters", reported
	// in raiMediaFilteredCount with Reason.
	Filtered int `json:"filtered,omitempty"`
	// Reason of the filtered samples; default one with a support code
	// of the child-safety category.
	Reason string `json:"reason,omitempty"`
	// SubmitStatus, when set, is the HTTP status the submit answers
	// with a google.rpc.Status (400, 403, 429, 500, 503); with Reason,
	// that is its message (a safety refusal: "... Support codes: ...").
	// 504 DEADLINE_EXCEEDED is a gateway's: the job runs all the same.
	SubmitStatus int `json:"submitStatus,omitempty"`
	// RetryDelay is the google.rpc.RetryInfo of a 429 SubmitStatus, in
	// its JSON form ("37s"); default "1s".
	RetryDelay string `json:"retryDelay,omitempty"`
	// PollStatus likewise for the polls of the operation: the first
	// PollFailures of them, or every one when PollFailures is 0.
	PollStatus   int `json:"pollStatus,omitempty"`
	PollFailures int `json:"pollFailures,omitempty"`
	// ErrorCode, when set, ends the operation done with this
	// google.rpc.Code (3 INVALID_ARGUMENT, 7 PERMISSION_DENIED, 13 ...);
	// with Reason, that is its message.
	ErrorCode int `json:"errorCode,omitempty"`
	// Never: the operation never finishes.
	Never bool `json:"never,omitempty"`
	// Drop accepts the job, then closes the connection without an
	// answer; Truncate answers 200 with a body cut short. Either way the
	// job runs, and counts as accepted.
	Drop     bool `json:"drop,omitempty"`
	Truncate bool `json:"truncate,omitempty"`
}

// DefaultReason is the filter reason when Outcome.Reason is empty.
const DefaultReason = "Unable to show generated videos that violate our safety policies. Support codes: 58061214"

// RefusedPrompt is the message of a safety refusal at submit, in the
// words of Google's guidelines ("The prompt couldn't be submitted", "it
// might violate our policies"), with a support code of the violence
// category.
const RefusedPrompt = "The prompt couldn't be submitted. It might violate our policies. Support codes: 61493863"

// Request is one request the fake received.
type Request = providerfake.Request

// Submit is one recorded submit request.
type Submit struct {
	API       string         `json:"api"` // "vertex" or "gemini"
	Model     string         `json:"model"`
	Operation string         `json:"operation,omitempty"` // "" when refused
	Status    int            `json:"status"`
	Body      map[string]any `json:"body"`
	// Instance and Parameters are the body's instances[0] and
	// parameters, kept as raw JSON so that numbers stay exact.
	Instance   json.RawMessage `json:"-"`
	Parameters json.RawMessage `json:"-"`
}

type operation struct {
	name, api, model string
	done             time.Time
	samples          int
	sample           []byte // Config.Video
	storageURI       string
	outcome          Outcome
	polls            int
	// rendered is closed once videos (or renderErr) are set, when the
	// fake has a Renderer.
	rendered  chan struct{}
	videos    [][]byte
	renderErr error
	// seconds is the length of its videos: its durationSeconds, or for
	// an extension its source's and 7 more; kept is until when the
	// Gemini API keeps them for an extension (2 days, restarted by each
	// reference, veomodels [gemini-extend]).
	seconds    int
	kept       time.Time
	resolution string
}

// video is the bytes of sample i.
func (op *operation) video(i int) []byte {
	if i < len(op.videos) {
		return op.videos[i]
	}
	if op.sample != nil {
		return op.sample
	}
	return Video
}

// Server is the fake. It is an http.Handler.
type Server struct {
	cfg Config
	mux *http.ServeMux

	providerfake.Base[Outcome, Submit]

	mu     sync.Mutex
	ops    map[string]*operation
	window time.Time // start of the current quota window
	inWin  int
	// storageURL is where Gemini downloads redirect to; "" serves them
	// on the API's origin.
	storageURL string
}

// New returns a fake with cfg.
func New(cfg Config) *Server {
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), ops: map[string]*operation{}}
	s.mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/google/models/{call}", s.vertex)
	s.mux.HandleFunc("GET /storage/v1/b/{bucket}/o/{object...}", s.object)
	s.mux.HandleFunc("POST /v1beta/models/{call}", s.gemini)
	s.mux.HandleFunc("GET /v1beta/models/{model}/operations/{id}", s.geminiPoll)
	s.mux.HandleFunc("GET /v1beta/files/{call}", s.file)
	s.mux.HandleFunc("GET /v1beta/models/{model}", s.geminiModel)
	s.mux.HandleFunc("GET /v1/publishers/google/models/{model}", s.vertexModel)
	s.Accepts = func(sub Submit) (string, bool) { return promptOf(sub.Body), sub.Operation != "" }
	s.SetRetired(cfg.Retired...)
	s.Handle(s.mux, func(w http.ResponseWriter, msg string) { rpcError(w, 400, msg) })
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Record("api", r)
	if _, pattern := s.mux.Handler(r); pattern == "" {
		// Google answers a path it does not serve in its own shape too.
		rpcError(w, http.StatusNotFound, "The requested URL "+r.URL.Path+" was not found on this server.")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Storage is the handler of the second origin: serve it on a listener of
// its own and pass its URL to RedirectDownloads.
func (s *Server) Storage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Record("storage", r)
		// /download/{operation id}/{sample}: the path is the grant, as
		// a signed URL's is; no key is needed, and none is expected.
		id, sample, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/download/"), "/")
		i, err := strconv.Atoi(sample)
		if !ok || err != nil {
			rpcError(w, 404, "no such object")
			return
		}
		s.sendVideo(w, id, i)
	})
}

// RedirectDownloads makes Gemini file downloads answer 302 to the
// Storage handler served at url, as Google's downloads redirect to
// where the video is stored.
func (s *Server) RedirectDownloads(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storageURL = strings.TrimRight(url, "/")
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func (s *Server) vertex(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(w, r) {
		return
	}
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	switch method {
	case "predictLongRunning":
		prefix := fmt.Sprintf("projects/%s/locations/%s/publishers/google/models/%s",
			r.PathValue("project"), r.PathValue("location"), model)
		s.submit(w, r, "vertex", model, prefix)
	case "fetchPredictOperation":
		var in struct {
			OperationName string `json:"operationName"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.OperationName == "" {
			rpcError(w, 400, "operationName is required")
			return
		}
		s.poll(w, r, "vertex", in.OperationName)
	default:
		rpcError(w, 404, "no method "+method)
	}
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	if !s.keyOK(w, r) {
		return
	}
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	if method != "predictLongRunning" {
		rpcError(w, 404, "no method "+method)
		return
	}
	s.submit(w, r, "gemini", model, "models/"+model)
}

func (s *Server) geminiPoll(w http.ResponseWriter, r *http.Request) {
	if !s.keyOK(w, r) {
		return
	}
	s.poll(w, r, "gemini", "models/"+r.PathValue("model")+"/operations/"+r.PathValue("id"))
}

func (s *Server) tokenOK(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		rpcError(w, 401, "Request had invalid authentication credentials.")
		return false
	}
	return true
}

func (s *Server) keyOK(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.APIKey != "" && r.Header.Get("x-goog-api-key") != s.cfg.APIKey {
		rpcError(w, 400, "API key not valid. Please pass a valid API key.")
		return false
	}
	return true
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, api, model, prefix string) {
	var body struct {
		Instances  []json.RawMessage `json:"instances"`
		Parameters json.RawMessage   `json:"parameters"`
	}
	raw := map[string]any{}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	var buf json.RawMessage
	if err := dec.Decode(&buf); err != nil || json.Unmarshal(buf, &body) != nil || len(body.Instances) != 1 {
		rpcError(w, 400, "want one instance")
		return
	}
	d := json.NewDecoder(strings.NewReader(string(buf)))
	d.UseNumber()
	_ = d.Decode(&raw)
	var p struct {
		SampleCount int    `json:"sampleCount"`
		StorageURI  string `json:"storageUri"`
	}
	_ = json.Unmarshal(body.Parameters, &p)
	sub := Submit{API: api, Model: model, Body: raw, Instance: body.Instances[0], Parameters: body.Parameters}
	// A retired model is not found whatever the request asks of it, as
	// Google answers before it reads the parameters.
	status, msg := Refusal(api, r.PathValue("project"), r.PathValue("location"), model, body.Instances[0], body.Parameters)
	if s.retired(model) {
		status, msg = 404, retiredMessage(model)
	}
	var seconds int
	if status == 0 {
		s.mu.Lock()
		status, msg, seconds = s.extension(api, model, body.Instances[0], body.Parameters)
		s.mu.Unlock()
	}
	if status != 0 {
		sub.Status = status
		s.Submit(sub)
		rpcError(w, status, msg)
		return
	}
	o, _ := s.Match(promptOf(raw))

	s.mu.Lock()
	now := s.now()
	status, msg, delay := o.SubmitStatus, cmp.Or(o.Reason, "refused by the fake"), cmp.Or(o.RetryDelay, "1s")
	if status == http.StatusGatewayTimeout {
		status = 0 // a gateway gave up waiting: the job runs all the same
	}
	if status == 0 && s.cfg.SubmitsPerWindow > 0 {
		if now.Sub(s.window) >= s.cfg.Window {
			s.window, s.inWin = now, 0
		}
		if s.inWin >= s.cfg.SubmitsPerWindow {
			status, msg = 429, "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model"
			// Google's hint: when the quota's window opens again.
			delay = fmt.Sprintf("%.3fs", s.window.Add(s.cfg.Window).Sub(now).Seconds())
		} else {
			s.inWin++
		}
	}
	if status != 0 {
		sub.Status = status
		s.Submit(sub)
		s.mu.Unlock()
		if status == http.StatusTooManyRequests {
			rpcError(w, status, msg, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
			return
		}
		rpcError(w, status, msg)
		return
	}
	op := &operation{name: prefix + "/operations/" + providerfake.NewID(8), api: api, model: model,
		done: now.Add(s.cfg.Delay), samples: max(1, p.SampleCount), sample: s.cfg.Video, storageURI: p.StorageURI, outcome: o,
		seconds: seconds, resolution: resolutionOf(body.Parameters)}
	op.kept = op.done.Add(Kept)
	if s.cfg.Renderer != nil {
		op.rendered = make(chan struct{})
		go s.render(op, body.Instances[0], body.Parameters)
	}
	s.ops[op.name] = op
	sub.Operation, sub.Status = op.name, 200
	s.Submit(sub)
	s.mu.Unlock()
	switch {
	case o.SubmitStatus == http.StatusGatewayTimeout:
		rpcError(w, o.SubmitStatus, "Deadline expired before operation could complete.")
	case o.Drop:
		providerfake.Drop(w) // the job runs; its answer never arrives
	case o.Truncate:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		fmt.Fprintf(w, `{"name": "%s`, op.name[:len(op.name)/2])
	default:
		providerfake.WriteJSON(w, 200, map[string]any{"name": op.name})
	}
}

func (s *Server) retired(model string) bool { return s.Retired(model) }

// Kept is how long the Gemini API keeps a video for an extension after
// it was made or last referenced (veomodels [gemini-extend]).
const Kept = 48 * time.Hour

// extension is the refusal (status and message) of a submit whose video
// to extend api cannot take, or 0 and the length of the video the
// submit makes. The Gemini API extends only the videos Veo made there,
// named by their file uri or sent as their bytes, for 2 days after they
// were made or last referenced, of up to 141 seconds (veomodels
// [gemini-extend]); Vertex AI extends videos of up to 30 seconds
// [vertex-extend], and whether it refuses one Veo did not make is not
// known first-hand: the fake takes it. s.mu is held.
func (s *Server) extension(api, model string, instance, parameters json.RawMessage) (int, string, int) {
	var in struct {
		Video *struct {
			URI, EncodedVideo, GCSURI, BytesBase64Encoded string
		}
	}
	var p struct {
		DurationSeconds *int
		Resolution      *string
	}
	_ = json.Unmarshal(instance, &in)
	_ = json.Unmarshal(parameters, &p)
	made := 8 // Google's default durationSeconds
	if p.DurationSeconds != nil {
		made = *p.DurationSeconds
	}
	if in.Video == nil {
		return 0, "", made
	}
	m, _, _ := veomodels.Lookup(api, model)
	now := s.now()
	src := s.madeVideo(api, in.Video.URI+in.Video.GCSURI, in.Video.EncodedVideo+in.Video.BytesBase64Encoded)
	switch {
	case src == nil && api == settings.GeneratorGemini:
		return 400, "Gemini API only supports video extensions for Veo-generated videos.", 0
	case src == nil:
		return 0, "", task.ExtensionSeconds
	case api == settings.GeneratorGemini && now.After(src.kept):
		return 400, "The video to extend is no longer available: videos are kept for 2 days.", 0
	case !slices.Contains(m.Limits.ExtendResolutions, src.resolution):
		return 400, fmt.Sprintf("The video to extend is %s; videos at %s can be extended.", src.resolution, strings.Join(m.Limits.ExtendResolutions, ", ")), 0
	case src.seconds > m.Limits.MaxExtendSeconds:
		return 400, fmt.Sprintf("The video to extend is %d seconds long; videos of at most %d seconds can be extended.",
			src.seconds, m.Limits.MaxExtendSeconds), 0
	}
	src.kept = now.Add(Kept)
	return 0, "", src.seconds + task.ExtensionSeconds
}

// resolutionOf is a request's resolution, Google's default (720p) when
// it names none.
func resolutionOf(parameters json.RawMessage) string {
	var p struct{ Resolution string }
	_ = json.Unmarshal(parameters, &p)
	return cmp.Or(p.Resolution, "720p")
}

// madeVideo is the done operation of api whose video uri names (a
// Gemini file's uri, a Vertex gs:// object) or whose bytes b64 are, the
// latest of those with these bytes; nil if the fake made none. s.mu is
// held.
func (s *Server) madeVideo(api, uri, b64 string) *operation {
	now := s.now()
	var id string
	switch {
	case strings.Contains(uri, "/v1beta/files/"):
		file, _, _ := strings.Cut(uri[strings.Index(uri, "/v1beta/files/")+len("/v1beta/files/"):], ":")
		if i := strings.LastIndex(file, "-"); i > 0 {
			id = file[:i]
		}
	case strings.HasPrefix(uri, "gs://"):
		id = path.Base(path.Dir(uri))
	}
	var bytes []byte
	if b64 != "" {
		bytes, _ = base64.StdEncoding.DecodeString(b64)
	}
	var found *operation
	for name, op := range s.ops {
		if op.api != api || now.Before(op.done) || !providerfake.IsClosed(op.rendered) {
			continue
		}
		if id != "" && lastPart(name) == id {
			return op
		}
		if bytes == nil {
			continue
		}
		for i := range op.samples {
			if string(op.video(i)) == string(bytes) && (found == nil || op.done.After(found.done)) {
				found = op
			}
		}
	}
	return found
}

// retiredMessage is the message of a retired model's 404.
func retiredMessage(model string) string {
	return fmt.Sprintf("Publisher Model `publishers/google/models/%s` is no longer available.", model)
}

// geminiModel answers the metadata of a model (models.get).
func (s *Server) geminiModel(w http.ResponseWriter, r *http.Request) {
	if !s.keyOK(w, r) {
		return
	}
	s.model(w, r.PathValue("model"), "models/")
}

// vertexModel answers the metadata of a publisher model
// (publishers.models.get).
func (s *Server) vertexModel(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(w, r) {
		return
	}
	s.model(w, r.PathValue("model"), "publishers/google/models/")
}

func (s *Server) model(w http.ResponseWriter, model, prefix string) {
	if s.retired(model) {
		rpcError(w, 404, retiredMessage(model))
		return
	}
	providerfake.WriteJSON(w, 200, map[string]any{"name": prefix + model})
}

func (s *Server) poll(w http.ResponseWriter, r *http.Request, api, name string) {
	s.mu.Lock()
	op, ok := s.ops[name]
	polls := 0
	if ok {
		op.polls++
		polls = op.polls
	}
	s.mu.Unlock()
	if !ok || op.api != api {
		rpcError(w, 404, "operation "+name+" not found")
		return
	}
	o := op.outcome
	if o.PollStatus != 0 && (o.PollFailures == 0 || polls <= o.PollFailures) {
		rpcError(w, o.PollStatus, "poll refused by the fake")
		return
	}
	if o.Never || s.now().Before(op.done) || !providerfake.IsClosed(op.rendered) {
		providerfake.WriteJSON(w, 200, map[string]any{"name": name})
		return
	}
	if op.renderErr != nil && o.ErrorCode == 0 {
		o.ErrorCode = 13 // INTERNAL
	}
	if o.ErrorCode != 0 {
		providerfake.WriteJSON(w, 200, map[string]any{"name": name, "done": true,
			"error": map[string]any{"code": o.ErrorCode, "message": cmp.Or(o.Reason, "the operation failed in the fake")}})
		return
	}
	filtered := min(o.Filtered, op.samples)
	reasons := []string{}
	if filtered > 0 {
		reasons = append(reasons, cmp.Or(o.Reason, DefaultReason))
	}
	n := op.samples - filtered
	base := "http://" + r.Host
	if api == "gemini" {
		samples := make([]any, n)
		for i := range samples {
			video := map[string]any{"uri": fmt.Sprintf("%s/v1beta/files/%s-%d:download?alt=media", base, lastPart(name), i)}
			if s.cfg.InlineVideos {
				video = map[string]any{"encodedVideo": inlineRef(i), "encoding": "video/mp4"}
			}
			samples[i] = map[string]any{"video": video}
		}
		resp := map[string]any{"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
			"generateVideoResponse": map[string]any{"generatedSamples": samples,
				"raiMediaFilteredCount": filtered, "raiMediaFilteredReasons": reasons}}
		writeInline(w, op, map[string]any{"name": name, "done": true, "response": resp})
		return
	}
	videos := make([]any, n)
	for i := range videos {
		if op.storageURI != "" {
			videos[i] = map[string]any{"gcsUri": fmt.Sprintf("%s/%s/sample_%d.mp4",
				strings.TrimRight(op.storageURI, "/"), lastPart(name), i), "mimeType": "video/mp4"}
		} else {
			videos[i] = map[string]any{"bytesBase64Encoded": inlineRef(i), "mimeType": "video/mp4"}
		}
	}
	resp := map[string]any{"@type": "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse",
		"videos": videos, "raiMediaFilteredCount": filtered, "raiMediaFilteredReasons": reasons}
	writeInline(w, op, map[string]any{"name": name, "done": true, "response": resp})
}

// inlineRef stands for sample i's base64 in an answer until writeInline
// writes it: a NUL no answer of the fake has otherwise.
func inlineRef(i int) string { return fmt.Sprintf("\x00inline-%d", i) }

// writeInline answers v, each inlineRef in it replaced by its sample's
// bytes, base64, streamed: a test that measures what a poll of four
// large inline videos costs the client must not see the fake's copies.
func writeInline(w http.ResponseWriter, op *operation, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		rpcError(w, 500, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	out := bufio.NewWriterSize(w, 64<<10)
	defer out.Flush()
	for {
		// encoding/json writes the NUL as \u0000.
		start := bytes.Index(b, []byte(`\u0000inline-`))
		if start < 0 {
			out.Write(b)
			return
		}
		out.Write(b[:start])
		b = b[start+len(`\u0000inline-`):]
		end := bytes.IndexByte(b, '"')
		i, _ := strconv.Atoi(string(b[:end]))
		b = b[end:]
		enc := base64.NewEncoder(base64.StdEncoding, out)
		enc.Write(op.video(i))
		enc.Close()
	}
}

// object serves any gs:// object a Vertex operation named, as the Cloud
// Storage JSON API does with alt=media.
func (s *Server) object(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(w, r) {
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		rpcError(w, 400, "want alt=media")
		return
	}
	// gs://bucket/prefix/{operation id}/sample_{i}.mp4
	obj := r.PathValue("object")
	dir, file := path.Split(obj)
	var i int
	fmt.Sscanf(file, "sample_%d.mp4", &i)
	s.sendVideo(w, path.Base(dir), i)
}

// sendVideo answers sample i of the operation whose id is id.
func (s *Server) sendVideo(w http.ResponseWriter, id string, i int) {
	s.mu.Lock()
	var op *operation
	for name, o := range s.ops {
		if lastPart(name) == id {
			op = o
		}
	}
	s.mu.Unlock()
	if op == nil {
		rpcError(w, 404, "no such object")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(op.video(i))
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	if !s.keyOK(w, r) {
		return
	}
	file, ok := strings.CutSuffix(r.PathValue("call"), ":download")
	sep := strings.LastIndex(file, "-")
	if !ok || sep < 0 {
		rpcError(w, 404, "no such file")
		return
	}
	i, _ := strconv.Atoi(file[sep+1:])
	s.mu.Lock()
	storage := s.storageURL
	s.mu.Unlock()
	if storage != "" {
		http.Redirect(w, r, fmt.Sprintf("%s/download/%s/%d", storage, file[:sep], i), http.StatusFound)
		return
	}
	s.sendVideo(w, file[:sep], i)
}

// render renders op's samples from its request with the Renderer.
func (s *Server) render(op *operation, instance, parameters json.RawMessage) {
	defer close(op.rendered)
	op.videos, op.renderErr = providerfake.Render(s.cfg.Renderer, func(dir string) (provider.Job, error) {
		return jobOf(op, instance, parameters, dir)
	})
}

// jobOf is the built-in generator's job for a request: its images
// written to dir, its parameters as they came (the Gemini API sends no
// generateAudio: its models always make audio).
func jobOf(op *operation, instance, parameters json.RawMessage, dir string) (provider.Job, error) {
	var in struct {
		Prompt           string `json:"prompt"`
		Image, LastFrame *struct {
			BytesBase64Encoded string `json:"bytesBase64Encoded"`
		}
	}
	p := params.Parameters{GenerateAudio: true}
	if err := json.Unmarshal(instance, &in); err != nil {
		return provider.Job{}, err
	}
	if err := json.Unmarshal(parameters, &p); err != nil {
		return provider.Job{}, err
	}
	// The built-in renderer stops at 1080p: a 4K request is rendered
	// there, as a test reads the request's value, not the pixels.
	if p.Resolution == catalog.Resolution4K {
		p.Resolution = "1080p"
	}
	job := provider.Job{TaskID: lastPart(op.name), Type: catalog.TextToVideo, Prompt: in.Prompt, Params: p,
		Images: map[string]string{}, OutDir: filepath.Join(dir, "out")}
	for role, img := range map[string]*struct {
		BytesBase64Encoded string `json:"bytesBase64Encoded"`
	}{task.RoleImage: in.Image, task.RoleLastFrame: in.LastFrame} {
		if img == nil {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(img.BytesBase64Encoded)
		if err != nil {
			return provider.Job{}, fmt.Errorf("%s: %w", role, err)
		}
		job.Images[role] = filepath.Join(dir, role)
		if err := os.WriteFile(job.Images[role], b, 0o600); err != nil {
			return provider.Job{}, err
		}
	}
	switch {
	case in.Image != nil && in.LastFrame != nil:
		job.Type = catalog.FirstLastFrame
		job.Images[task.RoleFirstFrame] = job.Images[task.RoleImage]
		delete(job.Images, task.RoleImage)
	case in.Image != nil:
		job.Type = catalog.ImageToVideo
	}
	return job, nil
}

func promptOf(body map[string]any) string {
	inst, _ := body["instances"].([]any)
	if len(inst) == 0 {
		return ""
	}
	m, _ := inst[0].(map[string]any)
	p, _ := m["prompt"].(string)
	return p
}

// statusNames are the google.rpc.Code names of the HTTP statuses the
// fake answers.
var statusNames = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

func rpcError(w http.ResponseWriter, status int, msg string, details ...any) {
	e := map[string]any{"code": status, "message": msg, "status": cmp.Or(statusNames[status], "UNKNOWN")}
	if len(details) > 0 {
		e["details"] = details
	}
	providerfake.WriteJSON(w, status, map[string]any{"error": e})
}

func lastPart(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// The credentials a test gives gen for the fake: a Config with them
// (Credentials) refuses requests that lack them.
const (
	TestToken  = "ya29.fake"
	TestAPIKey = "AIza-fake"
)

// Credentials is cfg requiring TestToken and TestAPIKey.
func Credentials(cfg Config) Config {
	cfg.Token, cfg.APIKey = TestToken, TestAPIKey
	return cfg
}

// Vars are the variables an operator sets to have gen's generator api
// (settings.GeneratorVertex or GeneratorGemini) call the fake serving
// at url, with TestToken and TestAPIKey; gen polls it every second.
func Vars(api, url string) settings.Vars {
	return settings.Vars{
		settings.Generator:            api,
		settings.VertexProject:        "demo-project",
		settings.VertexEndpoint:       url,
		settings.VertexAccessToken:    TestToken,
		settings.GeminiAPIKey:         TestAPIKey,
		settings.GeminiEndpoint:       url,
		settings.ProviderPollInterval: "1s",
	}
}
