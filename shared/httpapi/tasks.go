package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
)

// urlLifetime is how long a download URL works after its task completed.
// URLs are always signed to expire at completedAt + urlLifetime, so that a
// download after expiry answers the same (dead) expiresAt.
const urlLifetime = 24 * time.Hour

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
	Videos         []video           `json:"videos,omitzero"`
	Error          *task.Failure     `json:"error,omitempty"`
	// CreditsRefunded is set for a failed task, and for a completed one
	// that refunded the samples it could not produce.
	CreditsRefunded *int   `json:"creditsRefunded,omitempty"`
	DownloadURL     string `json:"downloadUrl"`
}

// video is one signed download of a completed task.
type video struct {
	URL       string `json:"url"`
	MimeType  string `json:"mimeType"`
	ExpiresAt string `json:"expiresAt"`
}

// downloadResponse is the download endpoint's 200.
type downloadResponse struct {
	Success     bool    `json:"success"`
	TaskID      string  `json:"taskId"`
	Videos      []video `json:"videos"`
	TotalVideos int     `json:"totalVideos"`
}

func (a *API) status(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := a.ownTask(r, c)
	if err != nil {
		return err
	}
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
	if t.Status == task.Completed {
		if resp.Videos, err = a.signVideos(r.Context(), t); err != nil {
			return err
		}
	}
	if !t.Status.Terminal() {
		w.Header().Set("Retry-After", seconds(a.pollHint(t)))
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// pollHint is the Retry-After of an unfinished task: RetryAfter, or the
// least time the generation is expected to take when that is shorter, so
// that a client is not told to wait 5 s for a video made in 2; never
// under a second.
func (a *API) pollHint(t task.Task) time.Duration {
	hint := a.cfg.RetryAfter
	if a.cfg.Estimate != nil {
		if lo, _ := a.cfg.Estimate(t.Params); lo < hint {
			hint = lo
		}
	}
	return max(hint, time.Second)
}

func (a *API) download(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := a.ownTask(r, c)
	if err != nil {
		return err
	}
	if t.Status != task.Completed {
		msg := fmt.Sprintf("The task is %s; its videos can be downloaded once its status is completed.", t.Status)
		if t.Status == task.Failed {
			msg = "The task failed; it has no videos to download."
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeVideoNotReady, Message: msg,
			Details: map[string]any{"status": t.Status}}
	}
	videos, err := a.signVideos(r.Context(), t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, downloadResponse{Success: true, TaskID: t.ID, Videos: videos, TotalVideos: len(videos)})
	return nil
}

// ownTask returns the task the path names if it belongs to the caller's
// account. A malformed id, an unknown one and another account's are the
// same 404; a malformed one costs no look-up.
func (a *API) ownTask(r *http.Request, c *caller) (task.Task, error) {
	id := r.PathValue("taskId")
	if id == "" {
		// Served outside the router (one endpoint per Lambda).
		id = path.Base(r.URL.Path)
	}
	if !task.ValidID(id) {
		return task.Task{}, errTaskNotFound
	}
	t, err := a.cfg.Store.Task(r.Context(), id)
	if err != nil {
		return task.Task{}, fmt.Errorf("task %s: %w", id, err)
	}
	if t.AccountID != c.key.AccountID {
		return task.Task{}, errTaskNotFound
	}
	return t, nil
}

// signVideos signs the videos of a completed task, each to expire 24 hours
// after completion.
func (a *API) signVideos(ctx context.Context, t task.Task) ([]video, error) {
	expires := t.CompletedAt.Add(urlLifetime)
	out := make([]video, 0, len(t.Videos))
	for _, v := range t.Videos {
		url, err := a.cfg.Blobs.SignURL(ctx, v.Key, expires)
		if err != nil {
			return nil, &blobError{fmt.Errorf("sign %s of task %s: %w", v.Key, t.ID, err)}
		}
		mimeType := v.MimeType
		if mimeType == "" {
			mimeType = "video/mp4"
		}
		out = append(out, video{URL: url, MimeType: mimeType, ExpiresAt: formatTime(expires)})
	}
	return out, nil
}

// outcome is what a finished task adds to its status and history entry:
// completedAt (completed or failed), processingTime (completed), error and
// creditsRefunded (failed, or a partial completion's refund).
func outcome(t task.Task) (completedAt string, processingTime *int, failure *task.Failure, refunded *int) {
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
		failure = t.Failure
		if failure == nil {
			failure = &task.Failure{Code: task.FailInternal, Message: "the generation failed"}
		}
		refunded = &n
	}
	return completedAt, processingTime, failure, refunded
}
