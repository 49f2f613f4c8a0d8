// Package providerfake is the skeleton the strict fakes of the providers share
// (veotest, openaitest): the outcomes a test sets by prompt
// (When), the requests and submits a fake received, with the count of
// paid jobs the tests and the conformance suite read (Accepted), a
// dropped answer, and the few HTTP helpers every fake writes alike. A
// fake adds only its provider's wire shapes: its routes, its refusals
// and its capability table.
package providerfake

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

// Video is the MP4 every fake's sample is, unless a fake renders: one
// second of a test pattern.
//
//go:embed sample.mp4
var Video []byte

// Request is one request a fake received.
type Request struct {
	// Origin is "api", or "storage" for a second origin downloads
	// redirect to.
	Origin string      `json:"origin"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
}

// Base records what a fake received and holds the outcomes its tests
// set: O is the fake's Outcome, S its record of a submit. Embed it; set
// Accepts.
type Base[O, S any] struct {
	// Accepts says of a recorded submit its prompt, and whether it
	// started a job (which the provider bills).
	Accepts func(S) (prompt string, accepted bool)

	mu       sync.Mutex
	rules    []*rule[O]
	requests []Request
	submits  []S
	retired  []string
}

// SetRetired replaces the provider model ids the fake no longer serves
// (its Config.Retired at first): their lookups and submits answer the
// provider's not found from then on. A test retires a model while the
// service runs, and brings it back with SetRetired() (issue 33).
func (b *Base[O, S]) SetRetired(models ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retired = append([]string(nil), models...)
}

// Retired reports whether the fake no longer serves model.
func (b *Base[O, S]) Retired(model string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.retired, model)
}

type rule[O any] struct {
	text    string
	outcome O
	used    int
}

// When makes the jobs whose prompt contains text end with o. Rules are
// tried in the order they were added.
func (b *Base[O, S]) When(text string, o O) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules = append(b.rules, &rule[O]{text: text, outcome: o})
}

// Match is the outcome of the first rule whose text prompt contains,
// and how many submits that rule has matched, this one included (0: no
// rule, the zero outcome).
func (b *Base[O, S]) Match(prompt string) (o O, used int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.rules {
		if strings.Contains(prompt, r.text) {
			r.used++
			return r.outcome, r.used
		}
	}
	return o, 0
}

// Submit records a submit, accepted or refused.
func (b *Base[O, S]) Submit(s S) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.submits = append(b.submits, s)
}

// Submits are the submit requests received so far, in order.
func (b *Base[O, S]) Submits() []S {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]S(nil), b.submits...)
}

// Accepted counts the submits whose prompt contains text that started a
// job: what the provider would bill.
func (b *Base[O, S]) Accepted(text string) int {
	n := 0
	for _, s := range b.Submits() {
		if prompt, ok := b.Accepts(s); ok && strings.Contains(prompt, text) {
			n++
		}
	}
	return n
}

// Record records a request on origin, its headers included, so that a
// test sees every header that left the service.
func (b *Base[O, S]) Record(origin string, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, Request{Origin: origin, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
}

// Requests are the requests received so far, in order.
func (b *Base[O, S]) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.requests...)
}

// Handle serves the fake's own routes on mux, for a fake run as a
// process (infra/fakeveo): GET /fake/submits, POST /fake/rules with
// {"when": text, ...the outcome's fields}, and PUT /fake/retired with
// the JSON list of model ids it no longer serves (SetRetired). refuse
// answers a body that does not decode, in the provider's error shape.
func (b *Base[O, S]) Handle(mux *http.ServeMux, refuse func(w http.ResponseWriter, msg string)) {
	mux.HandleFunc("GET /fake/submits", func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, 200, b.Submits()) })
	mux.HandleFunc("POST /fake/rules", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var when struct {
			When string `json:"when"`
		}
		var o O
		if err == nil {
			err = json.Unmarshal(body, &when)
		}
		if err == nil {
			err = json.Unmarshal(body, &o)
		}
		if err != nil {
			refuse(w, "body: "+err.Error())
			return
		}
		b.When(when.When, o)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /fake/retired", func(w http.ResponseWriter, r *http.Request) {
		var models []string
		if err := json.NewDecoder(r.Body).Decode(&models); err != nil {
			refuse(w, "body: "+err.Error())
			return
		}
		b.SetRetired(models...)
		w.WriteHeader(http.StatusNoContent)
	})
}

// Drop closes the connection without an answer: the job runs, and its
// answer never arrives.
func Drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// NewID is a random id of n bytes, in hex.
func NewID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// IsClosed reports whether c is closed; a nil c (no rendering) is.
func IsClosed(c chan struct{}) bool {
	if c == nil {
		return true
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Render renders a job with g, as a fake with a Renderer does, and
// answers the videos' bytes: job builds the job in a folder of its own,
// removed once the videos are read.
func Render(g provider.Generator, job func(dir string) (provider.Job, error)) ([][]byte, error) {
	dir, err := os.MkdirTemp("", "fake-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	j, err := job(dir)
	if err != nil {
		return nil, err
	}
	res, err := g.Generate(context.Background(), j)
	if err != nil {
		return nil, err
	}
	var videos [][]byte
	for _, p := range res.Paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		videos = append(videos, b)
	}
	return videos, nil
}

// Asked is what a provider's request asked of one video, in our terms.
type Asked struct {
	ID, Prompt         string
	Seconds            int
	Aspect, Resolution string
	Audio              bool
	// Image, when set, is the first frame (image-to-video).
	Image []byte
}

// RenderAsked renders the one video a request asked for with g, as the
// built-in generator renders a start, so that a test can probe what the
// request said.
func RenderAsked(g provider.Generator, a Asked) ([]byte, error) {
	videos, err := Render(g, func(dir string) (provider.Job, error) {
		job := provider.Job{TaskID: a.ID, Type: catalog.TextToVideo, Prompt: a.Prompt, Model: catalog.DefaultModel,
			Params: params.Parameters{SampleCount: 1, DurationSeconds: a.Seconds, AspectRatio: a.Aspect, Resolution: a.Resolution,
				GenerateAudio: a.Audio, EnhancePrompt: true},
			Images: map[string]string{}, OutDir: filepath.Join(dir, "out")}
		if a.Image != nil {
			job.Type = catalog.ImageToVideo
			job.Images[task.RoleImage] = filepath.Join(dir, "image")
			return job, os.WriteFile(job.Images[task.RoleImage], a.Image, 0o600)
		}
		return job, nil
	})
	if err != nil || len(videos) == 0 {
		return nil, err
	}
	return videos[0], nil
}
