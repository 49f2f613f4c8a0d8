package workflow

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Posters makes the poster frame of a generated video: a JPEG of its
// first frame, at the video's size. Generate stores it beside the video
// (blob.PosterKey) when Steps.Posters is set.
type Posters interface {
	Poster(ctx context.Context, video, out string) error
}

// FFmpegPosters makes posters with ffmpeg: the built-in renderer's (and
// on AWS the generate function's layer's), at Path; "" is "ffmpeg" on
// PATH.
type FFmpegPosters struct{ Path string }

// Poster writes the first frame of video to out as a JPEG.
func (f FFmpegPosters) Poster(ctx context.Context, video, out string) error {
	cmd := exec.CommandContext(ctx, cmp.Or(f.Path, "ffmpeg"), "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-i", video, "-frames:v", "1", "-q:v", "3", "-f", "image2", "-c:v", "mjpeg", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ffmpeg poster of %s: %w: %s", video, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
