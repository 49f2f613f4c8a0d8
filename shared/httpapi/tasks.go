package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"path"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
)

// statusResponse is a task as the status endpoint shows it.
type statusResponse struct {
	Success        bool              `json:"success"`
	TaskID         string            `json:"taskId"`
	Status         task.Status       `json:"status"`
	Type           string            `json:"type"`
	Model          string            `json:"model"`
	Prompt         string            `json:"prompt"`
	Parameters     params.Parameters `json:"parameters"`
	CreditsCost    int               `json:"creditsCost"`
	CreatedAt      string            `json:"createdAt"`
	CompletedAt    string            `json:"completedAt,omitempty"`
	ProcessingTime *int              `json:"processingTime,omitempty"`
	// Progress (an extension) is the percentage done the provider
	// reported, while processing, when it reports one.
	Progress int `json:"progress,omitempty"`
	// Route and ProviderModel (extensions) say who made a completed
	// task's videos: the route it ran on and the provider's model id.
	// What that cost is the operator's alone (genctl report).
	Route         string   `json:"route,omitempty"`
	ProviderModel string   `json:"providerModel,omitempty"`
	Videos        []video  `json:"videos,omitzero"`
	Error         *failure `json:"error,omitempty"`
	// CreditsRefunded is set for a failed task, and for a completed one
	// that refunded the samples it could not produce.
	CreditsRefunded *int   `json:"creditsRefunded,omitempty"`
	DownloadURL     string `json:"downloadUrl"`
}

// failure is why a task failed, as a client sees it.
type failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// video is one signed download of a completed task.
type video struct {
	URL       string `json:"url"`
	MimeType  string `json:"mimeType"`
	ExpiresAt string `json:"expiresAt"`
	// PosterURL (an extension) is its poster frame, a JPEG of the
	// video's size signed like it; absent when it has none.
	PosterURL string `json:"posterUrl,omitempty"`
}

// downloadResponse is the download endpoint's 200.
type downloadResponse struct {
	Success     bool    `json:"success"`
	TaskID      string  `json:"taskId"`
	Videos      []video `json:"videos"`
	TotalVideos int     `json:"totalVideos"`
}

func (a *API) status(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	t, err := a.svc.Task(r.Context(), *c, taskID(r))
	if err != nil {
		return err
	}
	return a.writeStatus(w, r, t)
}

// writeStatus answers t's status body: the status endpoint's 200, and
// the cancel endpoint's.
func (a *API) writeStatus(w http.ResponseWriter, r *http.Request, t task.Task) error {
	body, err := a.statusJSON(r.Context(), t)
	if err != nil {
		return err
	}
	if !t.Status.Terminal() {
		w.Header().Set("Retry-After", seconds(a.svc.PollHint(t)))
	}
	writeBody(w, http.StatusOK, body)
	return nil
}

// statusJSON is t's status body with its videos' signed links, encoded
// (ending in a newline): the status and cancel endpoints' answer and
// each live event's data. It is encoded once while nothing in it moves
// (statusCache).
func (a *API) statusJSON(ctx context.Context, t task.Task) ([]byte, error) {
	var videos []video
	if t.Status == task.Completed {
		var err error
		if videos, err = a.videos(ctx, t); err != nil {
			return nil, err
		}
	}
	if body, ok := a.statuses.get(t, videos); ok {
		return body, nil
	}
	resp := statusBody(t)
	resp.Videos = videos
	var buf bytes.Buffer
	encodeJSON(&buf, resp)
	a.statuses.put(t, videos, buf.Bytes())
	return buf.Bytes(), nil
}

// statusCacheMax bounds the bodies kept; past it the least recently
// used goes, which costs one encoding when its task is polled again.
const statusCacheMax = 10000

// statusCache keeps the status body each task was last answered with.
// A body is a function of the task's fields that never change, of its
// status and progress (its outcome is set once, with its status), and
// of its videos' signed links, which the blob store keeps until they
// near their expiry: a client polling a task gets the same bytes, encoded
// once, until one of those moves. Invalidation: an entry is answered
// only while all of those are as it was encoded with (get), so none is
// ever dropped for being stale.
type statusCache struct {
	m *lru.Cache[string, statusEntry]
}

type statusEntry struct {
	status   task.Status
	progress int
	videos   []video
	body     []byte
}

func newStatusCache() statusCache {
	m, _ := lru.New[string, statusEntry](statusCacheMax) // a positive size: New cannot fail
	return statusCache{m}
}

func (c statusCache) get(t task.Task, videos []video) ([]byte, bool) {
	e, ok := c.m.Get(t.ID)
	if !ok || e.status != t.Status || e.progress != t.Progress || !slices.Equal(e.videos, videos) {
		return nil, false
	}
	return e.body, true
}

func (c statusCache) put(t task.Task, videos []video, body []byte) {
	c.m.Add(t.ID, statusEntry{status: t.Status, progress: t.Progress, videos: videos, body: body})
}

// statusBody is t's status body without its signed video links, which
// each request signs afresh: the status endpoint's and the webhook
// events' data.
func statusBody(t task.Task) statusResponse {
	resp := statusResponse{
		Success:     true,
		TaskID:      t.ID,
		Status:      t.Status,
		Type:        t.Type,
		Model:       t.Model,
		Prompt:      t.Prompt,
		Parameters:  t.Params,
		CreditsCost: t.CreditsCost,
		CreatedAt:   formatTime(t.CreatedAt),
		DownloadURL: downloadPath(t.ID),
	}
	resp.CompletedAt, resp.ProcessingTime, resp.Error, resp.CreditsRefunded = outcome(t)
	resp.Route, resp.ProviderModel = madeBy(t)
	if t.Status == task.Processing {
		resp.Progress = t.Progress
	}
	return resp
}

func (a *API) download(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	t, err := a.svc.Task(r.Context(), *c, taskID(r))
	if err != nil {
		return err
	}
	videos, err := a.videos(r.Context(), t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, downloadResponse{Success: true, TaskID: t.ID, Videos: videos, TotalVideos: len(videos)})
	return nil
}

// taskID is the task id the path names.
func taskID(r *http.Request) string {
	if id := r.PathValue("taskId"); id != "" {
		return id
	}
	// Served outside the router (one endpoint per Lambda).
	return path.Base(r.URL.Path)
}

// videos signs the download links of a completed task.
func (a *API) videos(ctx context.Context, t task.Task) ([]video, error) {
	signed, err := a.svc.Videos(ctx, t)
	if err != nil {
		return nil, err
	}
	out := make([]video, 0, len(signed))
	for _, v := range signed {
		out = append(out, video{URL: v.URL, MimeType: v.MimeType, ExpiresAt: formatTime(v.ExpiresAt), PosterURL: v.PosterURL})
	}
	return out, nil
}

// madeBy is the route and provider model of a completed task, for its
// status and history entry; never its cost.
func madeBy(t task.Task) (route, providerModel string) {
	if t.Status != task.Completed {
		return "", ""
	}
	return t.Billing.Route, t.Billing.ProviderModel
}

// outcome is what a finished task adds to its status and history entry:
// completedAt (completed or failed), processingTime (completed), error and
// creditsRefunded (failed, or a partial completion's refund).
func outcome(t task.Task) (completedAt string, processingTime *int, fail *failure, refunded *int) {
	if !t.Status.Terminal() {
		return "", nil, nil, nil
	}
	if !t.CompletedAt.IsZero() {
		completedAt = formatTime(t.CompletedAt)
	}
	n := t.CreditsRefunded
	switch t.Status {
	case task.Completed:
		pt := t.ProcessingTime()
		processingTime = &pt
		if n > 0 {
			refunded = &n
		}
	case task.Failed:
		fail = &failure{Code: task.FailInternal, Message: "the generation failed"}
		if t.Failure != nil {
			fail = &failure{Code: t.Failure.Code, Message: t.Failure.Message}
		}
		refunded = &n
	}
	return completedAt, processingTime, fail, refunded
}
