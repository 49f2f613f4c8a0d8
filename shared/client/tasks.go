package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Status returns a task. An unknown id (or another account's) is an
// *Error with Code CodeTaskNotFound.
func (c *Client) Status(ctx context.Context, taskID string) (*Task, error) {
	var t Task
	res, err := c.getJSON(ctx, "/api/gen/status/"+url.PathEscape(taskID), nil, &t)
	if err != nil {
		return nil, err
	}
	t.RetryAfter = retryAfter(res.Header, c.now())
	return &t, nil
}

// Download returns the signed URLs of a completed task's videos. A task
// that is not completed is an *Error with Code CodeVideoNotReady.
func (c *Client) Download(ctx context.Context, taskID string) (*Download, error) {
	var d Download
	if _, err := c.getJSON(ctx, "/api/gen/download/"+url.PathEscape(taskID), nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Fetch copies a video's bytes to w and returns how many it copied. The
// signed URL needs no key, and none is sent. A failure before the first
// byte is retried like a read; an answer other than 200 is an *Error.
func (c *Client) Fetch(ctx context.Context, v Video, w io.Writer) (int64, error) {
	for attempt := 1; ; attempt++ {
		n, err := c.fetchOnce(ctx, v.URL, w)
		if err == nil || n > 0 || ctx.Err() != nil {
			return n, err
		}
		wait, again := c.retryWait(call{retry: true}, attempt, err)
		if !again {
			return 0, err
		}
		if err := sleep(ctx, wait); err != nil {
			return 0, err
		}
	}
}

func (c *Client) fetchOnce(ctx context.Context, u string, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, &noRetry{fmt.Errorf("gen: video URL: %w", err)}
	}
	req.Header.Set("User-Agent", c.userAgent)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("gen: fetch video: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return 0, parseError(res, b, c.now())
	}
	n, err := io.Copy(w, res.Body)
	if err != nil {
		return n, fmt.Errorf("gen: fetch video: %w", err)
	}
	return n, nil
}

// SaveVideos downloads the videos of a completed task into dir (created
// if needed), as <taskId>.mp4, or <taskId>-1.mp4, <taskId>-2.mp4, ... when
// there are several, and returns their paths. A file appears only once it
// is complete.
func (c *Client) SaveVideos(ctx context.Context, taskID, dir string) ([]string, error) {
	d, err := c.Download(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	var paths []string
	for i, v := range d.Videos {
		name := d.TaskID + ".mp4"
		if len(d.Videos) > 1 {
			name = fmt.Sprintf("%s-%d.mp4", d.TaskID, i+1)
		}
		path := filepath.Join(dir, name)
		if err := c.saveVideo(ctx, v, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func (c *Client) saveVideo(ctx context.Context, v Video, path string) error {
	// Not os.CreateTemp: its files are private (0600), and a saved video
	// should be readable like any file the user makes, as the umask allows.
	var buf [6]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	part := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(buf[:])+".part")
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if _, err := c.Fetch(ctx, v, f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gen: write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}

// WaitOptions bound and pace Wait.
type WaitOptions struct {
	// Timeout bounds the whole wait (default 10 minutes).
	Timeout time.Duration
	// MinInterval and MaxInterval bound the backoff between polls when
	// the service gives no Retry-After (defaults 1s and 10s).
	MinInterval, MaxInterval time.Duration
	// OnPoll, when set, is called with every status polled.
	OnPoll func(*Task)
}

// Wait polls a task until it is completed or failed, and returns it. It
// waits as long as the service's Retry-After asks between polls, or backs
// off exponentially when there is none.
//
// A failed task is returned with a *GenerationError. When the wait times
// out, Wait returns the last status it saw (nil if none) and a
// *WaitTimeoutError that carries the task id: the task goes on, and can
// be polled again later. Other errors (a 404, ctx ending) are returned as
// they are, with the last status seen.
func (c *Client) Wait(ctx context.Context, taskID string, opts WaitOptions) (*Task, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = time.Second
	}
	if opts.MaxInterval < opts.MinInterval {
		opts.MaxInterval = max(10*time.Second, opts.MinInterval)
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	timedOut := func(last *Task) (*Task, error) {
		e := &WaitTimeoutError{TaskID: taskID, Waited: time.Since(start)}
		if last != nil {
			e.Status = last.Status
		}
		return last, e
	}

	var last *Task
	interval := opts.MinInterval
	for {
		t, err := c.Status(wctx, taskID)
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return timedOut(last)
			}
			return last, err
		}
		last = t
		if opts.OnPoll != nil {
			opts.OnPoll(t)
		}
		switch t.Status {
		case StatusCompleted:
			return t, nil
		case StatusFailed:
			e := &GenerationError{TaskID: t.TaskID, CreditsRefunded: t.Refunded()}
			if t.Error != nil {
				e.Code, e.Message = t.Error.Code, t.Error.Message
			}
			return t, e
		}
		next := interval
		if t.RetryAfter > 0 {
			next = t.RetryAfter
		} else {
			interval = min(interval*3/2, opts.MaxInterval)
		}
		if err := sleep(wctx, next); err != nil {
			if ctx.Err() == nil {
				return timedOut(last)
			}
			return last, ctx.Err()
		}
	}
}
