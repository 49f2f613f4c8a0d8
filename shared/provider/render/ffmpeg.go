package render

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/genvideo/gen/shared/catalog"
)

// Names inside the work directory; relative, so they need no escaping in a
// filtergraph.
const (
	captionFile = "caption.txt"
	fontFile    = "font.ttf"
)

// maxInputPixels bounds the decoded size of an input image: 64 megapixels,
// far above any camera a client uploads from.
const maxInputPixels = 64 << 20

// frameSpec is what every sample of a job shares.
type frameSpec struct {
	w, h, duration, fontSize int
	audio, captioned         bool
}

func (s frameSpec) frames() int { return s.duration * FPS }

// look is the seeded appearance of one sample, drawn from a hash of what
// the client chose: same inputs, same look.
type look struct {
	h [32]byte
}

func newLook(job Job, sample int) look {
	hash := sha256.New()
	fmt.Fprintf(hash, "render/v1\x00%s\x00%s\x00%s\x00%d\x00%d",
		job.Type, job.Prompt, job.Params.NegativePrompt, job.Params.SeedValue(), sample)
	var l look
	copy(l.h[:], hash.Sum(nil))
	return l
}

func (l look) u32(i int) uint32 { return binary.BigEndian.Uint32(l.h[i*4%32:]) }

// frac is a number in [0, 1) from hash word i.
func (l look) frac(i int) float64 { return float64(l.u32(i)) / (1 << 32) }

func (l look) color(i int) string { return fmt.Sprintf("0x%06x", l.u32(i)&0xffffff) }

// renderSample runs one ffmpeg in work for sample i, writing the video
// to out and its poster frame to poster. images are the names of the
// input images in work.
func (r *Renderer) renderSample(ctx context.Context, job Job, s frameSpec, images []string, i int, work, out, poster string) error {
	l := newLook(job, i)
	var inputs []string
	var video string
	switch job.Type {
	case catalog.TextToVideo:
		video = textGraph(s, l)
	case catalog.ImageToVideo:
		inputs = []string{images[0]}
		video = imageGraph(s, l)
	case catalog.FirstLastFrame:
		inputs = images
		video = firstLastGraph(s, l)
	}
	// The poster is the video's first frame, split off the graph's output
	// into a second output of the same run: no second ffmpeg (each costs
	// about 55 ms of CPU just to start) and no decoding of the video.
	graph := video + ",split=2[v][p]"
	if s.audio {
		graph += ";" + audioGraph(s, l) + "[a]"
	}

	args := []string{"-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-y"}
	for _, name := range inputs {
		// A still image is one frame; the graph loops it after scaling, so
		// the scaler runs once rather than once a frame. max_pixels refuses
		// decompression bombs (a small PNG of a gigantic canvas).
		args = append(args, "-max_pixels", strconv.Itoa(maxInputPixels), "-framerate", strconv.Itoa(FPS), "-i", name)
	}
	// The poster's output comes first, so that the video's arguments are
	// the last ones and exactly what they are without a poster: the same
	// bytes.
	args = append(args, "-filter_complex", graph,
		"-map", "[p]", "-frames:v", "1", "-q:v", "3", "-c:v", "mjpeg", "-f", "image2", poster,
		"-map", "[v]")
	if s.audio {
		args = append(args, "-map", "[a]", "-c:a", "aac", "-b:a", "128k", "-flags:a", "+bitexact")
	}
	args = append(args,
		// One x264 thread and bitexact muxing make the output a function of
		// the input alone: the same seed gives the same bytes.
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "20", "-threads", "1",
		"-pix_fmt", "yuv420p", "-flags:v", "+bitexact",
		"-t", strconv.Itoa(s.duration),
		"-movflags", "+faststart", "-fflags", "+bitexact", "-map_metadata", "-1",
		"-f", "mp4", out)
	return r.run(ctx, job.TaskID, work, args)
}

// textGraph draws moving gradients at half size (they are smooth, so the
// upscale costs nothing visible and saves three quarters of the work).
func textGraph(s frameSpec, l look) string {
	types := []string{"linear", "radial", "circular", "spiral"}
	g := fmt.Sprintf("gradients=s=%dx%d:r=%d:d=%d:seed=%d:n=4:c0=%s:c1=%s:c2=%s:c3=%s:speed=%.4f:type=%s,"+
		"scale=%d:%d:flags=bicubic,format=yuv420p",
		s.w/2, s.h/2, FPS, s.duration, l.u32(0), l.color(1), l.color(2), l.color(3), l.color(4),
		0.005+0.03*l.frac(5), types[l.u32(6)%4], s.w, s.h)
	if s.captioned {
		g += "," + drawCaption(s, l, "")
	}
	return g
}

// fitImage scales input n to fit the frame, pads it centred, converts it
// to pixfmt (the one the next filter takes, so that no second conversion
// blurs the colours) and repeats it for the whole video.
func fitImage(s frameSpec, n int, pixfmt string) string {
	return fmt.Sprintf("[%d:v]scale=%d:%d:force_original_aspect_ratio=decrease:force_divisible_by=2,"+
		"pad=%d:%d:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1,format=%s,"+
		"loop=loop=%d:size=1:start=0,setpts=N/%d/TB",
		n, s.w, s.h, s.w, s.h, pixfmt, s.frames()-1, FPS)
}

// imageGraph zooms slowly into a point of the image chosen by the hash.
// The zoom starts at exactly 1, so the first frame is the input image; the
// caption waits one second for the same reason.
func imageGraph(s frameSpec, l look) string {
	zoom := 0.08 + 0.12*l.frac(1)
	g := fitImage(s, 0, "yuv420p") + fmt.Sprintf(",zoompan=z='1+%.4f*on/%d':x='(iw-iw/zoom)*%.4f':y='(ih-ih/zoom)*%.4f':d=1:s=%dx%d:fps=%d,format=yuv420p",
		zoom, s.frames()-1, l.frac(2), l.frac(3), s.w, s.h, FPS)
	if s.captioned {
		g += "," + drawCaption(s, l, "gte(t,1)")
	}
	return g
}

// transitions are the xfade transitions a first-last-frame video may use.
var transitions = []string{"fade", "dissolve", "wipeleft", "wiperight", "wipeup", "wipedown",
	"slideleft", "slideright", "circleopen", "circleclose", "radial", "smoothleft", "smoothright"}

// firstLastGraph holds the first image for half a second, crosses over to
// the last one, and holds that for the last half second, so that the first
// and last frames are the inputs. The caption is shown only in between.
func firstLastGraph(s frameSpec, l look) string {
	hold := min(0.5, float64(s.duration)/4)
	// xfade takes no subsampled chroma: feed it 4:4:4 and subsample once.
	// Its output is hold + one input long; trim cuts it to the duration.
	g := fitImage(s, 0, "yuv444p") + "[first];" + fitImage(s, 1, "yuv444p") + "[last];" +
		fmt.Sprintf("[first][last]xfade=transition=%s:duration=%g:offset=%g,trim=end_frame=%d,format=yuv420p",
			transitions[l.u32(1)%uint32(len(transitions))], float64(s.duration)-2*hold, hold, s.frames())
	if s.captioned {
		g += "," + drawCaption(s, l, fmt.Sprintf("between(t,1,%d)", s.duration-1))
	}
	return g
}

// drawCaption draws the caption file near the bottom. expansion=none keeps
// drawtext from reading %{...} sequences in the prompt.
func drawCaption(s frameSpec, l look, enable string) string {
	c := fmt.Sprintf("drawtext=fontfile=%s:textfile=%s:expansion=none:fontsize=%d:fontcolor=white:"+
		"line_spacing=%d:box=1:boxcolor=%s@0.55:boxborderw=%d:x=(w-text_w)/2:y=h-text_h-%d",
		fontFile, captionFile, s.fontSize, s.fontSize/4, "0x"+darken(l.u32(7)), s.fontSize/3, s.h/12)
	if enable != "" {
		c += ":enable='" + enable + "'"
	}
	return c
}

// darken keeps the caption box dark enough for white text.
func darken(v uint32) string {
	r, g, b := (v>>16&0xff)/4, (v>>8&0xff)/4, (v&0xff)/4
	return fmt.Sprintf("%02x%02x%02x", r, g, b)
}

// audioGraph is a seeded chord (a root and its fifth) over quiet pink
// noise, faded in and out.
func audioGraph(s frameSpec, l look) string {
	root := 110 * math.Pow(2, float64(l.u32(2)%24)/12) // two octaves from A2
	d := s.duration
	return fmt.Sprintf("sine=f=%.2f:r=48000:d=%d[s1];sine=f=%.2f:r=48000:d=%d[s2];"+
		"anoisesrc=c=pink:r=48000:a=0.04:seed=%d:d=%d[n];"+
		"[s1][s2][n]amix=inputs=3:normalize=0,afade=t=in:d=0.3,afade=t=out:st=%g:d=0.3,aformat=channel_layouts=stereo",
		root, d, root*1.5, d, l.u32(3)%(1<<31), d, float64(d)-0.3)
}

// run runs ffmpeg in dir under the concurrency limit and classifies its
// failure.
func (r *Renderer) run(ctx context.Context, taskID, dir string, args []string) error {
	if err := r.slots.Acquire(ctx); err != nil {
		return &TransientError{Msg: "render " + taskID + ": cancelled while waiting for an ffmpeg slot", Err: err}
	}
	defer r.slots.Release()

	var stderr tailBuffer
	cmd := exec.CommandContext(ctx, r.ffmpeg, args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return &TransientError{Msg: "render " + taskID + ": ffmpeg stopped", Err: ctx.Err()}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return &TransientError{Msg: "render " + taskID + ": start ffmpeg", Err: err}
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &TransientError{Msg: fmt.Sprintf("render %s: %s (%s): %s", taskID, errKilled, ws.Signal(), tail(stderr.buf)), Err: errKilled}
	}
	return &GenerationError{Msg: "the video could not be rendered",
		Err: fmt.Errorf("render %s: ffmpeg %s: %s", taskID, exit, tail(stderr.buf))}
}

// tailBuffer keeps the last few kilobytes written to it: a broken input
// can make ffmpeg complain once a macroblock.
type tailBuffer struct{ buf []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	const keep = 8 << 10
	t.buf = append(t.buf, p...)
	if len(t.buf) > keep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	return len(p), nil
}

// tail is the end of ffmpeg's output, where the reason for a failure is.
func tail(b []byte) string {
	const n = 1000
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + strings.ToValidUTF8(s[len(s)-n:], "")
	}
	return s
}
