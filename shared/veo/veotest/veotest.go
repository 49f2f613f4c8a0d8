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
// Operations finish after Config.Delay. Outcomes are chosen per request
// by the first rule whose text the prompt contains (When), else the
// default: videos for every sample. Submits beyond Config.SubmitsPerWindow
// in a Config.Window answer 429 RESOURCE_EXHAUSTED, as a project's quota
// does. Every submit is recorded (Submits) with its decoded body.
package veotest

import (
	"cmp"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Video is the MP4 every generated sample is: one second of a test
// pattern.
//
//go:embed sample.mp4
var Video []byte

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
}

// Outcome is what an operation ends with.
type Outcome struct {
	// Filtered samples are held back by the "safety filters", reported
	// in raiMediaFilteredCount with Reason.
	Filtered int `json:"filtered,omitempty"`
	// Reason of the filtered samples; default one with a support code
	// of the child-safety category.
	Reason string `json:"reason,omitempty"`
	// SubmitStatus, when set, is the HTTP status the submit answers
	// with a google.rpc.Status (400, 403, 429, 500, 503).
	SubmitStatus int `json:"submitStatus,omitempty"`
	// PollStatus likewise for every poll of the operation.
	PollStatus int `json:"pollStatus,omitempty"`
	// ErrorCode, when set, ends the operation done with this
	// google.rpc.Code (3 INVALID_ARGUMENT, 7 PERMISSION_DENIED, 13 ...).
	ErrorCode int `json:"errorCode,omitempty"`
	// Never: the operation never finishes.
	Never bool `json:"never,omitempty"`
}

// DefaultReason is the filter reason when Outcome.Reason is empty.
const DefaultReason = "Unable to show generated videos that violate our safety policies. Support codes: 58061214"

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
	storageURI       string
	outcome          Outcome
	polls            int
}

type rule struct {
	text    string
	outcome Outcome
}

// Server is the fake. It is an http.Handler.
type Server struct {
	cfg Config
	mux *http.ServeMux

	mu      sync.Mutex
	rules   []rule
	ops     map[string]*operation
	submits []Submit
	window  time.Time // start of the current quota window
	inWin   int
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
	s.mux.HandleFunc("GET /fake/submits", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, s.Submits()) })
	s.mux.HandleFunc("POST /fake/rules", s.addRule)
	return s
}

// When makes the operations whose prompt contains text end with o.
// Rules are tried in the order they were added.
func (s *Server) When(text string, o Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, rule{text, o})
}

// Submits are the submit requests received so far, in order.
func (s *Server) Submits() []Submit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Submit(nil), s.submits...)
}

// Accepted counts the submits whose prompt contains text that started
// an operation.
func (s *Server) Accepted(text string) int {
	n := 0
	for _, sub := range s.Submits() {
		if sub.Operation != "" && strings.Contains(promptOf(sub.Body), text) {
			n++
		}
	}
	return n
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func (s *Server) addRule(w http.ResponseWriter, r *http.Request) {
	var in struct {
		When string `json:"when"`
		Outcome
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		rpcError(w, 400, "body: "+err.Error())
		return
	}
	s.When(in.When, in.Outcome)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) vertex(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		rpcError(w, 401, "Request had invalid authentication credentials.")
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
	o := s.outcome(promptOf(raw))

	s.mu.Lock()
	now := s.now()
	status := o.SubmitStatus
	if status == 0 && s.cfg.SubmitsPerWindow > 0 {
		if now.Sub(s.window) >= s.cfg.Window {
			s.window, s.inWin = now, 0
		}
		if s.inWin >= s.cfg.SubmitsPerWindow {
			status = 429
		} else {
			s.inWin++
		}
	}
	if status != 0 {
		sub.Status = status
		s.submits = append(s.submits, sub)
		s.mu.Unlock()
		rpcError(w, status, "refused by the fake")
		return
	}
	op := &operation{name: prefix + "/operations/" + newID(), api: api, model: model,
		done: now.Add(s.cfg.Delay), samples: max(1, p.SampleCount), storageURI: p.StorageURI, outcome: o}
	s.ops[op.name] = op
	sub.Operation, sub.Status = op.name, 200
	s.submits = append(s.submits, sub)
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"name": op.name})
}

func (s *Server) poll(w http.ResponseWriter, r *http.Request, api, name string) {
	s.mu.Lock()
	op, ok := s.ops[name]
	if ok {
		op.polls++
	}
	s.mu.Unlock()
	if !ok || op.api != api {
		rpcError(w, 404, "operation "+name+" not found")
		return
	}
	o := op.outcome
	if o.PollStatus != 0 {
		rpcError(w, o.PollStatus, "poll refused by the fake")
		return
	}
	if o.Never || s.now().Before(op.done) {
		writeJSON(w, 200, map[string]any{"name": name})
		return
	}
	if o.ErrorCode != 0 {
		writeJSON(w, 200, map[string]any{"name": name, "done": true,
			"error": map[string]any{"code": o.ErrorCode, "message": "the operation failed in the fake"}})
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
			samples[i] = map[string]any{"video": map[string]any{
				"uri": fmt.Sprintf("%s/v1beta/files/%s-%d:download?alt=media", base, lastPart(name), i)}}
		}
		resp := map[string]any{"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse",
			"generateVideoResponse": map[string]any{"generatedSamples": samples,
				"raiMediaFilteredCount": filtered, "raiMediaFilteredReasons": reasons}}
		writeJSON(w, 200, map[string]any{"name": name, "done": true, "response": resp})
		return
	}
	videos := make([]any, n)
	for i := range videos {
		if op.storageURI != "" {
			videos[i] = map[string]any{"gcsUri": fmt.Sprintf("%s/%s/sample_%d.mp4",
				strings.TrimRight(op.storageURI, "/"), lastPart(name), i), "mimeType": "video/mp4"}
		} else {
			videos[i] = map[string]any{"bytesBase64Encoded": base64.StdEncoding.EncodeToString(Video), "mimeType": "video/mp4"}
		}
	}
	resp := map[string]any{"@type": "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse",
		"videos": videos, "raiMediaFilteredCount": filtered, "raiMediaFilteredReasons": reasons}
	writeJSON(w, 200, map[string]any{"name": name, "done": true, "response": resp})
}

// object serves any gs:// object a Vertex operation named, as the Cloud
// Storage JSON API does with alt=media.
func (s *Server) object(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		rpcError(w, 401, "Request had invalid authentication credentials.")
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		rpcError(w, 400, "want alt=media")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(Video)
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	if !s.keyOK(w, r) {
		return
	}
	if !strings.HasSuffix(r.PathValue("call"), ":download") {
		rpcError(w, 404, "no such file")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(Video)
}

func (s *Server) outcome(prompt string) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if strings.Contains(prompt, r.text) {
			return r.outcome
		}
	}
	return Outcome{}
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
	404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}

func rpcError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": cmp.Or(statusNames[status], "UNKNOWN")}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func lastPart(name string) string { return name[strings.LastIndex(name, "/")+1:] }
