package devstack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/httpguard"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

// leftoverAge is how long what a killed process left must have been
// untouched before it is removed: longer than a request body may take to
// arrive (an upload is written as it comes), with room to spare.
func leftoverAge(t httpguard.Timeouts) time.Duration {
	body := t.Body
	if body <= 0 {
		body = httpguard.DefaultBodyTimeout
	}
	return max(time.Hour, 2*body)
}

// cleanLeftovers removes what a process killed in the middle of its work
// (kill -9, a power cut) left in the data directory and no live task
// owns, once it has been untouched for leftoverAge:
//
//   - render work directories (tmp/generate-<task>-*) of tasks that are
//     not pending or processing;
//   - what fsblob never finished writing: partial uploads, content types
//     without their object, empty directories (fsblob.Store.Tidy);
//   - uploaded images of tasks never created (the process died between
//     the upload and the charge);
//   - videos and poster frames no task lists (stored for a task that
//     then failed);
//   - temporary files of the signing secret.
//
// A live task's files stay whatever their age. It runs at start-up and on
// every sweep; it logs what it removed and what failed, and the next run
// tries again.
func (s *Stack) cleanLeftovers(ctx context.Context) {
	before := time.Now().Add(-s.leftoverAge)
	// What each task id is, looked up once a run.
	type known struct {
		t     task.Task
		found bool
	}
	tasks := map[string]known{}
	lookup := func(id string) (known, error) {
		if k, ok := tasks[id]; ok {
			return k, nil
		}
		t, err := s.Store.Task(ctx, id)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return known{}, err
		}
		k := known{t, err == nil}
		tasks[id] = k
		return k, nil
	}
	live := func(k known) bool { return k.found && !k.t.Status.Terminal() }
	var workDirs, blobEntries, inputs, videos, other int
	var errs []error

	entries, err := os.ReadDir(s.tmpDir)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		id, ok := workflow.WorkDirTask(e.Name())
		info, ierr := e.Info()
		if !ok || ierr != nil || !info.ModTime().Before(before) {
			continue
		}
		k, err := lookup(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if live(k) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.tmpDir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		workDirs++
	}

	// Objects first, so that the directories they leave empty are old
	// enough for Tidy at the next run.
	orphans := func(prefix string, owned func(k known, key string) bool, n *int) {
		err := s.Blobs.Walk(prefix, func(key string, written time.Time) error {
			if !written.Before(before) {
				return nil
			}
			id, _, _ := strings.Cut(strings.TrimPrefix(key, prefix), "/")
			k, err := lookup(id)
			if err != nil {
				return err
			}
			if owned(k, key) {
				return nil
			}
			if err := s.Blobs.Delete(ctx, key); err != nil {
				return err
			}
			*n++
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	// A task keeps its inputs for as long as it is kept.
	orphans("inputs/", func(k known, _ string) bool { return k.found }, &inputs)
	orphans("videos/", func(k known, key string) bool {
		if live(k) {
			return true
		}
		for _, v := range k.t.Videos {
			if v.Key == key || v.Poster == key { // a video, or its poster frame
				return true
			}
		}
		return false
	}, &videos)

	n, err := s.Blobs.Tidy(before)
	blobEntries = n
	if err != nil {
		errs = append(errs, err)
	}
	secrets, _ := filepath.Glob(filepath.Join(s.dataDir, ".secret-*"))
	for _, p := range secrets {
		if info, err := os.Lstat(p); err == nil && info.ModTime().Before(before) && os.Remove(p) == nil {
			other++
		}
	}

	if workDirs+blobEntries+inputs+videos+other > 0 {
		s.logger.Info("removed what a stopped process left behind", "work_dirs", workDirs, "blob_entries", blobEntries,
			"orphan_inputs", inputs, "orphan_videos", videos, "other", other)
	}
	if err := errors.Join(errs...); err != nil && !errors.Is(err, context.Canceled) {
		s.logger.Warn("clean leftovers", "err", err)
	}
}
