package workflow

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/genvideo/gen/shared/slots"
)

// Posters makes the poster frame of a generated video: a JPEG of its
// first frame, at the video's size. Generate stores it beside the video
// (blob.PosterKey) when Steps.Posters is set and the generator handed
// none of its own (Result.Posters).
type Posters interface {
	Poster(ctx context.Context, video, out string) error
}

// FFmpegPosters makes posters with ffmpeg: the built-in renderer's (and
// on AWS the generate function's layer's). It runs a bounded number of
// ffmpeg at once: each costs about 55 ms of CPU and tens of MB however
// small its input (Debian's ffmpeg loads 215 shared libraries), so a
// burst of completions queues for a slot rather than forking hundreds.
type FFmpegPosters struct {
	path  string
	slots *slots.Slots
}

// NewFFmpegPosters makes posters with the ffmpeg at path ("" is "ffmpeg"
// on PATH), at most maxConcurrent at once (0: one per CPU, GOMAXPROCS).
func NewFFmpegPosters(path string, maxConcurrent int) *FFmpegPosters {
	return &FFmpegPosters{path: cmp.Or(path, "ffmpeg"), slots: slots.New(maxConcurrent)}
}

// Poster writes the first frame of video to out as a JPEG. Waiting for
// a slot ends with ctx.
func (f *FFmpegPosters) Poster(ctx context.Context, video, out string) error {
	if err := f.slots.Acquire(ctx); err != nil {
		return fmt.Errorf("ffmpeg poster of %s: waiting for a slot: %w", video, err)
	}
	defer f.slots.Release()
	cmd := exec.CommandContext(ctx, f.path, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-i", video, "-frames:v", "1", "-q:v", "3", "-f", "image2", "-c:v", "mjpeg", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ffmpeg poster of %s: %w: %s", video, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
