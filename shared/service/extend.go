package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// An extension (POST /api/gen/extend/{taskId}, issue 37) continues the
// video of one of the caller's completed tasks by about 7 seconds: a new
// task, of type catalog.VideoExtension, with its own charge, refund and
// history entry, made by the source's model on the route that made the
// source (the Gemini API extends only videos it made), never another.

// ExtensionError is an extension refused for its source task (400
// VALIDATION_ERROR naming taskId): failed, not finished, deleted, or a
// video its model or route cannot extend. Nothing was charged.
type ExtensionError struct {
	TaskID  string
	Message string
}

func (e *ExtensionError) Error() string { return e.Message }

// ExtensionSource is the caller's task id as the source of an
// extension: a completed task with a video, of a model that extends
// videos. Another account's task, an unknown id and a malformed one are
// ErrTaskNotFound; a deleted one (its charge is still in the account's
// ledger) and one that is not completed are an *ExtensionError.
func (s *Service) ExtensionSource(ctx context.Context, c Caller, id string) (task.Task, error) {
	t, err := s.Task(ctx, c, id)
	if errors.Is(err, ErrTaskNotFound) && s.deleted(ctx, c, id) {
		return task.Task{}, &ExtensionError{TaskID: id, Message: fmt.Sprintf("Task %s was deleted: its video is gone, and cannot be extended.", id)}
	}
	if err != nil {
		return task.Task{}, err
	}
	m, _ := catalog.Lookup(t.Model)
	switch {
	case t.Status != task.Completed:
		return task.Task{}, &ExtensionError{TaskID: id, Message: fmt.Sprintf("Task %s is %s: only a completed task's video can be extended.", id, t.Status)}
	case len(t.Videos) == 0:
		return task.Task{}, &ExtensionError{TaskID: id, Message: fmt.Sprintf("Task %s has no video to extend.", id)}
	case !m.Supports(catalog.VideoExtension):
		return task.Task{}, &ExtensionError{TaskID: id, Message: fmt.Sprintf("Task %s was made by %s, which extends no video.", id, t.Model)}
	}
	return t, nil
}

// deletedScan bounds the ledger read that tells a deleted task from an
// unknown id: a page of entries at most, newest first, back to the
// task's creation (its id says when).
const deletedScan = 500

// deleted reports whether the caller's account was charged for task id,
// which is gone: the ledger keeps a deleted task's entries (Delete).
func (s *Service) deleted(ctx context.Context, c Caller, id string) bool {
	created, ok := task.CreatedAtOf(id)
	if !ok {
		return false
	}
	entries, err := s.cfg.Store.LedgerPage(ctx, c.Key.AccountID, store.LedgerQuery{Limit: deletedScan})
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.At.Before(created) {
			break
		}
		if e.TaskID == id && e.Kind == domain.EntryCharge {
			return true
		}
	}
	return false
}

// ExtensionRequest is req (params.ParseExtensionJSON of src's model) as
// the extension of src at now: src's aspect ratio, and what the
// capability table checks of its video (the route that made it, its
// length, resolution and age).
func ExtensionRequest(src task.Task, req params.Request, now time.Time) params.Request {
	req.Params.AspectRatio = src.Params.AspectRatio
	req.Extends = &params.Source{TaskID: src.ID, Route: src.Billing.Route, Seconds: src.VideoSeconds(),
		Resolution: src.Params.Resolution, Age: now.Sub(src.CompletedAt)}
	return req
}

// Extend starts the extension req.Request (ExtensionRequest) of src: it
// checks the start against the source's route before anything is
// copied, copies src's first video to the new task's input, then starts
// it as any start (Start: charged at once, refunded if it fails).
func (s *Service) Extend(ctx context.Context, c Caller, src task.Task, req StartRequest) (Started, error) {
	check := req.Request
	if err := s.cfg.Capabilities.Apply(&check); err != nil {
		return Started{}, err
	}
	in, err := s.extensionInput(ctx, src, req.TaskID)
	if err != nil {
		return Started{}, err
	}
	req.Inputs = []task.Input{in}
	return s.Start(ctx, c, req)
}

// extensionInput copies src's first video to inputs/<taskID>/video.mp4,
// the new task's own copy (deleting either task leaves the other's), and
// describes it: the task that made it, that task's route, the provider's
// address of it and its length.
func (s *Service) extensionInput(ctx context.Context, src task.Task, taskID string) (task.Input, error) {
	v := src.Videos[0]
	rc, err := s.cfg.Blobs.Get(ctx, v.Key)
	if errors.Is(err, fs.ErrNotExist) {
		return task.Input{}, &ExtensionError{TaskID: src.ID, Message: fmt.Sprintf("Task %s's video is gone (it expired or was deleted).", src.ID)}
	}
	if err != nil {
		return task.Input{}, &BlobError{Err: fmt.Errorf("read %s: %w", v.Key, err)}
	}
	defer rc.Close()
	in := task.Input{Role: task.RoleVideo, Key: inputKey(taskID, task.RoleVideo) + ".mp4", OriginalName: src.ID + ".mp4",
		MimeType: v.MimeType, Task: src.ID, Route: src.Billing.Route, ProviderURI: v.ProviderURI, Seconds: src.VideoSeconds()}
	n, err := s.cfg.Blobs.Put(ctx, in.Key, rc, v.MimeType)
	if err != nil {
		s.DeleteBlob(ctx, in.Key)
		return task.Input{}, &BlobError{Err: fmt.Errorf("copy %s to %s: %w", v.Key, in.Key, err)}
	}
	in.Size = n
	return in, nil
}
