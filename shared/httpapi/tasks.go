package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"path"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/wire/taskview"
)

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
	var videos []wire.Video
	if t.Status == task.Completed {
		var err error
		if videos, err = a.videos(ctx, t); err != nil {
			return nil, err
		}
	}
	if body, ok := a.statuses.get(t, videos); ok {
		return body, nil
	}
	resp := taskview.Status(t)
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
	videos   []wire.Video
	body     []byte
}

func newStatusCache() statusCache {
	m, _ := lru.New[string, statusEntry](statusCacheMax) // a positive size: New cannot fail
	return statusCache{m}
}

func (c statusCache) get(t task.Task, videos []wire.Video) ([]byte, bool) {
	e, ok := c.m.Get(t.ID)
	if !ok || e.status != t.Status || e.progress != t.Progress || !slices.Equal(e.videos, videos) {
		return nil, false
	}
	return e.body, true
}

func (c statusCache) put(t task.Task, videos []wire.Video, body []byte) {
	c.m.Add(t.ID, statusEntry{status: t.Status, progress: t.Progress, videos: videos, body: body})
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
	writeJSON(w, http.StatusOK, wire.Download{Success: true, TaskID: t.ID, Videos: videos, TotalVideos: len(videos)})
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
func (a *API) videos(ctx context.Context, t task.Task) ([]wire.Video, error) {
	signed, err := a.svc.Videos(ctx, t)
	if err != nil {
		return nil, err
	}
	out := make([]wire.Video, 0, len(signed))
	for _, v := range signed {
		out = append(out, wire.Video{URL: v.URL, MimeType: v.MimeType, ExpiresAt: wire.TimeOf(v.ExpiresAt), PosterURL: v.PosterURL})
	}
	return out, nil
}
