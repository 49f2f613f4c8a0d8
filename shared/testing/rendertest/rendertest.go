// Package rendertest inspects real MP4 files with ffprobe, so that every
// test that must check a generated video (the renderer's, the end-to-end
// ones, the client's) asks the same questions the same way.
package rendertest

import (
	"encoding/json"
	"math"
	"os/exec"
	"strconv"
	"testing"
)

// Stream is one stream of a media file.
type Stream struct {
	CodecType string `json:"codec_type"`
	CodecName string `json:"codec_name"`
	PixFmt    string `json:"pix_fmt"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
}

// Info is what ffprobe reports of a file.
type Info struct {
	Streams []Stream
	// Duration of the container, in seconds.
	Duration float64
}

// Probe runs ffprobe on path.
func Probe(tb testing.TB, path string) Info {
	tb.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-print_format", "json",
		"-show_streams", "-show_format", path).Output()
	if err != nil {
		tb.Fatalf("ffprobe %s: %v", path, err)
	}
	var raw struct {
		Streams []Stream `json:"streams"`
		Format  struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		tb.Fatalf("ffprobe %s output: %v", path, err)
	}
	d, err := strconv.ParseFloat(raw.Format.Duration, 64)
	if err != nil {
		tb.Fatalf("ffprobe %s: duration %q: %v", path, raw.Format.Duration, err)
	}
	return Info{Streams: raw.Streams, Duration: d}
}

// Of returns the streams of one type ("video", "audio").
func (i Info) Of(codecType string) []Stream {
	var out []Stream
	for _, s := range i.Streams {
		if s.CodecType == codecType {
			out = append(out, s)
		}
	}
	return out
}

// Want is what a generated video must be.
type Want struct {
	Width, Height int
	Seconds       float64
	Audio         bool
}

// Check asserts the contract's video format: one H.264 yuv420p stream of
// the wanted size, the wanted duration within 0.15 s, and one AAC stream
// exactly when audio is wanted.
func Check(tb testing.TB, path string, want Want) {
	tb.Helper()
	info := Probe(tb, path)
	video := info.Of("video")
	if len(video) != 1 {
		tb.Errorf("%s: %d video streams, want 1", path, len(video))
	}
	for _, s := range video {
		if s.CodecName != "h264" || s.PixFmt != "yuv420p" || s.Width != want.Width || s.Height != want.Height {
			tb.Errorf("%s: video %s %s %dx%d, want h264 yuv420p %dx%d",
				path, s.CodecName, s.PixFmt, s.Width, s.Height, want.Width, want.Height)
		}
	}
	audio := info.Of("audio")
	aac := len(audio) == 1 && audio[0].CodecName == "aac"
	if want.Audio && !aac || !want.Audio && len(audio) != 0 {
		tb.Errorf("%s: audio streams %+v, want audio=%v (one AAC stream)", path, audio, want.Audio)
	}
	if math.Abs(info.Duration-want.Seconds) > 0.15 {
		tb.Errorf("%s: duration %.3f s, want %.0f s", path, info.Duration, want.Seconds)
	}
}
