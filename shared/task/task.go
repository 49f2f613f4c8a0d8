// Package task defines a generation task, its identifiers and its
// lifecycle: pending -> processing -> completed | failed, and pending ->
// failed. A terminal task never changes again.
package task

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/params"
)

// Status is where a task is in its lifecycle.
type Status string

// The four states of the contract.
const (
	Pending    Status = "pending"
	Processing Status = "processing"
	Completed  Status = "completed"
	Failed     Status = "failed"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{Pending, Processing, Completed, Failed}

// ParseStatus returns the status named s.
func ParseStatus(s string) (Status, bool) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// Terminal reports whether s is final: completed or failed.
func (s Status) Terminal() bool { return s == Completed || s == Failed }

// Failure codes a failed task carries in error.code.
const (
	FailGeneration    = "GENERATION_FAILED"
	FailContentPolicy = "CONTENT_POLICY_VIOLATION"
	FailTimeout       = "TIMEOUT"
	FailInternal      = "INTERNAL_ERROR"
	// FailCancelled: the client cancelled the task (POST
	// /api/gen/cancel/{taskId}) while it was pending or processing.
	FailCancelled = "CANCELLED"
)

// FailProviderOutcomeUnknown: the provider may have accepted the job
// (the request went out, no readable answer came back), and gen never
// submits a job twice, so the task ends failed and refunded.
const FailProviderOutcomeUnknown = "PROVIDER_OUTCOME_UNKNOWN"

// FailModelUnavailable: the provider no longer serves the model the
// task's model is mapped to (retired, or a remap to a model that does
// not exist). Nothing was made; the operator remaps the model.
const FailModelUnavailable = "MODEL_UNAVAILABLE"

// Failure says why a task failed: Code and Message are what the client
// is shown.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// NotStarted marks a task whose workflow never started: the start
	// that created it answered 503, saying nothing was charged, and a
	// retry under its Idempotency-Key starts afresh. Stored with the
	// failure, never shown.
	NotStarted bool `json:"notStarted,omitempty"`
}

// NotStartedFailure is the failure of a task whose workflow never
// started: the start that created it answered that nothing was charged
// (or no answer at all), and it is refunded.
var NotStartedFailure = Failure{Code: FailInternal, Message: "the generation could not be started", NotStarted: true}

// Cancelled reports whether t failed because its client cancelled it.
func (t Task) Cancelled() bool {
	return t.Status == Failed && t.Failure != nil && t.Failure.Code == FailCancelled
}

// VideoKey is the blob key of task taskID's n-th video (from 0): the
// workflow writes the same keys on every run, and a delete removes them
// all, those of a generation that ended after its task was cancelled
// included.
func VideoKey(taskID string, n int) string {
	return fmt.Sprintf("videos/%s/%d.mp4", taskID, n)
}

// Input roles: the multipart field each uploaded image came from.
const (
	RoleImage      = "image"
	RoleFirstFrame = "firstFrame"
	RoleLastFrame  = "lastFrame"
)

// RoleReferences is the file field (and the JSON field of upload ids) of
// a text-to-video start's reference images, an extension: up to three,
// each stored under its own role, ReferenceRole(i).
const RoleReferences = "referenceImages"

// ReferenceRole is the role of a start's i-th reference image (from 0):
// referenceImage1, referenceImage2, referenceImage3.
func ReferenceRole(i int) string { return "referenceImage" + strconv.Itoa(i+1) }

// IsReference reports whether role is a reference image's.
func IsReference(role string) bool {
	n, ok := strings.CutPrefix(role, "referenceImage")
	i, err := strconv.Atoi(n)
	return ok && err == nil && i >= 1 && ReferenceRole(i-1) == role
}

// RoleVideo is the input of an extension: a copy of the video it
// continues.
const RoleVideo = "video"

// ExtensionSeconds is what an extension adds to the video it continues
// (Veo: "by 7 seconds", shared/provider/veo/veomodels).
const ExtensionSeconds = 7

// Input is an uploaded image the generation starts from.
type Input struct {
	Role         string `json:"role"`
	Key          string `json:"key"` // blob key
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
	// Upload is the blob key of the direct upload the image was copied
	// from ("" for a file sent with the start): deleting the task deletes
	// it too, so that the upload cannot start another task (issue 20).
	Upload string `json:"upload,omitempty"`
	// The video an extension continues (RoleVideo) also records the
	// task that made it, that task's route (the only one that may extend
	// it), the provider's own address of it (Video.ProviderURI) and its
	// length.
	Task        string `json:"task,omitempty"`
	Route       string `json:"route,omitempty"`
	ProviderURI string `json:"providerUri,omitempty"`
	Seconds     int    `json:"seconds,omitempty"`
}

// Video is one generated video, stored under Key in blob storage.
type Video struct {
	Key      string `json:"key"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	// Poster is the blob key of the video's poster frame (a JPEG,
	// blob.PosterKey), when the workflow could make one.
	Poster string `json:"poster,omitempty"`
	// ProviderURI is where the provider keeps the video (the Gemini
	// API's file URI, Vertex AI's gs:// object), when it said: an
	// extension names the video so (the Gemini API extends only videos
	// it made). Never shown to clients.
	ProviderURI string `json:"providerUri,omitempty"`
}

// Task is one generation.
type Task struct {
	ID        string
	AccountID string
	// KeyName is the name label of the API key that started the task.
	KeyName string
	// KeyID is the id of that key, whose spending caps a refund of the
	// task gives back to; empty on tasks started before keys had caps.
	KeyID  string
	Type   string
	Model  string
	Prompt string
	Params params.Parameters
	Inputs []Input

	CreditsCost     int
	CreditsRefunded int

	Status      Status
	CreatedAt   time.Time
	StartedAt   time.Time // when it became processing; zero before
	CompletedAt time.Time // when it became terminal; zero before
	// Deadline is when a task that is not yet terminal fails with TIMEOUT.
	Deadline time.Time

	// Operation is the handle of the model provider's long-running
	// operation, set once right after the job was submitted: a task that
	// has one is polled, never submitted (and paid for) again. While a
	// submit may be in flight it holds a SubmittingMarker instead, so
	// that a re-run which finds it never submits a second job.
	Operation string

	// Progress is the percentage done its provider last reported while
	// the task is processing (1 to 100), 0 when none did.
	Progress int

	// WebhookURL, when set, receives this task's events (a start's
	// webhookUrl), besides the account's registered endpoints.
	WebhookURL string

	Videos  []Video
	Failure *Failure

	// Billing is who ran a completed task's job and what it cost the
	// operator; zero on any other task.
	Billing Billing
}

// Billing is who ran a done job and what it cost the operator: the
// route it went to (routes of one model fail over to one another; a
// single backend is its own route, named vertex, gemini, openai or
// builtin), the provider's model id, and the provider's price of the
// videos it made, from the route's price table
// (infra/docs/providers.md, "What a task cost"). The route and model
// are shown to the task's owner; the cost is the operator's alone.
type Billing struct {
	Route         string  `json:"route,omitempty"`
	ProviderModel string  `json:"providerModel,omitempty"`
	CostUSD       float64 `json:"costUsd,omitempty"`
}

// submittingPrefix begins a SubmittingMarker. No provider's operation
// name begins so (Vertex AI's and the Gemini API's begin "projects/" and
// "models/").
const submittingPrefix = "submitting:"

// SubmittingMarker is what Operation holds from just before a submit
// that started at at until the provider's handle replaces it.
func SubmittingMarker(at time.Time) string {
	return submittingPrefix + at.UTC().Format(time.RFC3339Nano)
}

// SubmittingSince reports whether op is a SubmittingMarker, and when its
// submit started (the zero time when that cannot be read: long ago).
func SubmittingSince(op string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(op, submittingPrefix)
	if !ok {
		return time.Time{}, false
	}
	at, _ := time.Parse(time.RFC3339Nano, rest)
	return at, true
}

// Handle is the provider's operation handle: Operation, unless it is a
// SubmittingMarker (then "").
func (t Task) Handle() string {
	if _, ok := SubmittingSince(t.Operation); ok {
		return ""
	}
	return t.Operation
}

// NotStarted reports whether t failed because its workflow never started
// (Failure.NotStarted).
func (t Task) NotStarted() bool {
	return t.Status == Failed && t.Failure != nil && t.Failure.NotStarted
}

// HasImage reports whether the task was started from uploaded images.
func (t Task) HasImage() bool {
	for _, in := range t.Inputs {
		if in.Role != RoleVideo {
			return true
		}
	}
	return false
}

// CreatedAtOf is when the task of id was created, from the id itself
// (NewID); ok is false for an id of another shape.
func CreatedAtOf(id string) (time.Time, bool) {
	if !ValidID(id) {
		return time.Time{}, false
	}
	_, rest, _ := strings.Cut(id, "_")
	digits, _, _ := strings.Cut(rest, "_")
	ms, _ := strconv.ParseInt(digits, 10, 64)
	return time.UnixMilli(ms), true
}

// Input returns the input with the given role.
func (t Task) Input(role string) (Input, bool) {
	for _, in := range t.Inputs {
		if in.Role == role {
			return in, true
		}
	}
	return Input{}, false
}

// VideoSeconds is the length of t's videos: its duration, or for an
// extension the video it continues and ExtensionSeconds more.
func (t Task) VideoSeconds() int {
	if in, ok := t.Input(RoleVideo); ok {
		return in.Seconds + ExtensionSeconds
	}
	return t.Params.DurationSeconds
}

// References is how many reference images t was started with.
func (t Task) References() int {
	n := 0
	for _, in := range t.Inputs {
		if IsReference(in.Role) {
			n++
		}
	}
	return n
}

// ProcessingTime is the whole seconds between creation and completion.
func (t Task) ProcessingTime() int {
	if t.CompletedAt.IsZero() {
		return 0
	}
	return int(t.CompletedAt.Sub(t.CreatedAt) / time.Second)
}

const (
	idPrefix    = "gen"
	suffixLen   = 10
	base36      = "0123456789abcdefghijklmnopqrstuvwxyz"
	minTimeMS   = 1_000_000_000_000   // 2001: an id older than this is not ours
	maxTimeMS   = 100_000_000_000_000 // far future bound, keeps the number sane
	maxSuffixLn = 32
)

// NewID returns a fresh task id gen_<unix ms>_<suffix>, the suffix drawn
// from a CSPRNG so that ids cannot be guessed.
func NewID(now time.Time) string {
	var b strings.Builder
	b.WriteString(idPrefix)
	b.WriteByte('_')
	b.WriteString(strconv.FormatInt(now.UnixMilli(), 10))
	b.WriteByte('_')
	max := big.NewInt(int64(len(base36)))
	for i := 0; i < suffixLen; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err))
		}
		b.WriteByte(base36[n.Int64()])
	}
	return b.String()
}

// ValidID reports whether s has the shape of a task id. A path id that
// does not is answered 404 without a look-up.
func ValidID(s string) bool {
	// Sliced, not split: every path that names a task is checked.
	prefix, rest, ok := strings.Cut(s, "_")
	if !ok || prefix != idPrefix {
		return false
	}
	digits, suffix, ok := strings.Cut(rest, "_")
	// Decimal digits as FormatInt writes them: no sign, no leading zero.
	if !ok || digits == "" || digits[0] == '0' || strings.TrimLeft(digits, "0123456789") != "" {
		return false
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || ms < minTimeMS || ms > maxTimeMS {
		return false
	}
	if len(suffix) < 9 || len(suffix) > maxSuffixLn {
		return false
	}
	for i := range len(suffix) {
		if strings.IndexByte(base36, suffix[i]) < 0 {
			return false
		}
	}
	return true
}
