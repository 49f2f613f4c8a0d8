package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// URLLifetime is how long a download URL works after its task completed.
// URLs are always signed to expire at completedAt + URLLifetime, so that a
// download after expiry answers the same (dead) expiresAt.
const URLLifetime = 24 * time.Hour

// Task returns the caller's task id. A malformed id, an unknown one and
// another account's are all ErrTaskNotFound; a malformed one costs no
// look-up.
func (s *Service) Task(ctx context.Context, c Caller, id string) (task.Task, error) {
	if !task.ValidID(id) {
		return task.Task{}, ErrTaskNotFound
	}
	t, err := s.cfg.Store.Task(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return task.Task{}, ErrTaskNotFound
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("task %s: %w", id, err)
	}
	if t.AccountID != c.Key.AccountID {
		return task.Task{}, ErrTaskNotFound
	}
	return t, nil
}

// SignedVideo is one video of a completed task, served by a signed URL
// until ExpiresAt.
type SignedVideo struct {
	URL      string
	MimeType string
	// PosterURL is the signed link of its poster frame (a JPEG), with
	// the same expiry; empty when the video has none.
	PosterURL string
	ExpiresAt time.Time
}

// Videos signs the download URLs of a completed task's videos, each to
// expire URLLifetime after completion. A task that is not completed has
// none: *NotReadyError.
func (s *Service) Videos(ctx context.Context, t task.Task) ([]SignedVideo, error) {
	if t.Status != task.Completed {
		return nil, &NotReadyError{TaskID: t.ID, Status: t.Status}
	}
	expires := t.CompletedAt.Add(URLLifetime)
	out := make([]SignedVideo, 0, len(t.Videos))
	for _, v := range t.Videos {
		url, err := s.cfg.Links.SignURL(ctx, v.Key, expires)
		if err != nil {
			return nil, &BlobError{fmt.Errorf("sign %s of task %s: %w", v.Key, t.ID, err)}
		}
		mimeType := v.MimeType
		if mimeType == "" {
			mimeType = "video/mp4"
		}
		sv := SignedVideo{URL: url, MimeType: mimeType, ExpiresAt: expires}
		if v.Poster != "" {
			if sv.PosterURL, err = s.cfg.Links.SignURL(ctx, v.Poster, expires); err != nil {
				return nil, &BlobError{fmt.Errorf("sign %s of task %s: %w", v.Poster, t.ID, err)}
			}
		}
		out = append(out, sv)
	}
	return out, nil
}

// History returns a page of the caller's tasks, newest first, and how
// many match the query in all.
func (s *Service) History(ctx context.Context, c Caller, q store.TaskQuery) ([]task.Task, int, error) {
	tasks, total, err := s.cfg.Store.Tasks(ctx, c.Key.AccountID, q)
	if err != nil {
		return nil, 0, fmt.Errorf("history of account %s: %w", c.Key.AccountID, err)
	}
	return tasks, total, nil
}

// Models lists the models a generation can use, and the default one.
func (s *Service) Models() (models []catalog.Model, defaultModel string) {
	return catalog.All(), catalog.Default()
}

// Unavailable is the set of models no provider route serves right now
// (Config.Availability); callers only read it.
func (s *Service) Unavailable(ctx context.Context) map[string]bool {
	if s.cfg.Availability == nil {
		return nil
	}
	return s.cfg.Availability.Unavailable(ctx)
}

// Capabilities are what the configured generator accepts for each model.
func (s *Service) Capabilities() capability.Table { return s.cfg.Capabilities }
