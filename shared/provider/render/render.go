// Package render is the built-in video generator: it renders real MP4
// files (H.264 yuv420p, AAC audio when asked, +faststart) with ffmpeg, so
// that the whole service runs and can be tested without a model provider.
//
// A video follows its request. Text-to-video draws moving gradients whose
// colours, shape and speed come from a hash of the prompt, seed and sample
// index, with the prompt as a caption. Image-to-video starts on the
// uploaded image (scaled and padded to the frame) and slowly zooms into it;
// the caption appears after the first second. First-last-frame starts on
// the first image and ends on the last one, crossing over with a
// transition picked by the hash. The audio is a seeded chord over pink
// noise. The same prompt, seed and parameters give the same frames. Each
// video comes with its poster frame, made in the same ffmpeg run.
//
// It renders what it is asked, whatever the prompt says: fault-injection
// directives such as "[fail]" are shared/faults' (WrapDirectives), which a
// stack puts around the renderer only when asked to.
package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/slots"
	"github.com/genvideo/gen/shared/task"
)

// DefaultFontFile is the caption font used when Config.FontFile is empty.
const DefaultFontFile = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

// FPS is the frame rate of every video.
const FPS = 24

// Config configures a Renderer.
type Config struct {
	// FFmpegPath is the ffmpeg binary; empty means "ffmpeg" on PATH.
	FFmpegPath string
	// FontFile is the TrueType font of the captions; empty means
	// DefaultFontFile.
	FontFile string
	// MaxConcurrent bounds the ffmpeg processes running at once across all
	// jobs; 0 means runtime.NumCPU().
	MaxConcurrent int
}

// Job is one generation to render: the workflow's job type, so that a
// *Renderer is a provider.Generator as it is.
type Job = provider.Job

// Result lists the rendered videos, one path per sample, in sample order.
type Result = provider.Result

// Renderer renders videos with ffmpeg. It is safe for concurrent use.
type Renderer struct {
	cfg    Config
	ffmpeg string
	slots  *slots.Slots
}

// New checks that ffmpeg (with libx264 and the filters used) and the
// caption font are present, and returns a Renderer.
func New(cfg Config) (*Renderer, error) {
	name := cfg.FFmpegPath
	if name == "" {
		name = "ffmpeg"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("ffmpeg not found: install it with `apt-get install ffmpeg` (looked for %q: %w)", name, err)
	}
	if err := checkFFmpeg(path); err != nil {
		return nil, err
	}
	if cfg.FontFile == "" {
		cfg.FontFile = DefaultFontFile
	}
	if cfg.FontFile, err = filepath.Abs(cfg.FontFile); err != nil {
		return nil, fmt.Errorf("caption font %q: %w", cfg.FontFile, err)
	}
	if _, err := os.Stat(cfg.FontFile); err != nil {
		return nil, fmt.Errorf("caption font not found: install it with `apt-get install fonts-dejavu-core` or set the font file: %w", err)
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = runtime.NumCPU()
	}
	return &Renderer{cfg: cfg, ffmpeg: path, slots: slots.New(cfg.MaxConcurrent)}, nil
}

// checkFFmpeg makes sure the binary has what the renderer uses, so that a
// minimal ffmpeg build fails at start-up with a clear message rather than
// on the first task.
func checkFFmpeg(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "gradients=s=64x64:d=0.1,drawtext=text=ok:expansion=none",
		"-f", "lavfi", "-i", "sine=d=0.1",
		"-c:v", "libx264", "-c:a", "aac", "-f", "null", "-").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ffmpeg at %s cannot render (it needs libx264, aac and the gradients and drawtext filters; install Debian's ffmpeg with `apt-get install ffmpeg`): %w: %s", path, err, tail(out))
	}
	return nil
}

// Generate renders the job's samples into job.OutDir as sample-<n>.mp4,
// each with its poster frame (Result.Posters), sample-<n>.jpg, a JPEG of
// its first frame made in the same ffmpeg run.
// Errors are a *TransientError, *GenerationError or *ContentPolicyError.
// When ctx ends, ffmpeg is killed and the error is a *TransientError that
// wraps ctx.Err(), so a caller tells its own deadline from a retryable
// failure with errors.Is. A failed job leaves no video behind.
func (r *Renderer) Generate(ctx context.Context, job Job) (Result, error) {
	p := job.Params
	w, h, err := frameSize(p.AspectRatio, p.Resolution)
	if err != nil {
		return Result{}, &GenerationError{Msg: "unsupported frame size", Err: err}
	}
	if p.DurationSeconds < 1 || p.DurationSeconds > 60 {
		return Result{}, &GenerationError{Msg: fmt.Sprintf("duration %d s is outside 1..60", p.DurationSeconds)}
	}
	if p.SampleCount < 1 || p.SampleCount > 8 {
		return Result{}, &GenerationError{Msg: fmt.Sprintf("sample count %d is outside 1..8", p.SampleCount)}
	}
	images, err := inputImages(job)
	if err != nil {
		return Result{}, &GenerationError{Msg: "the input images could not be used", Err: err}
	}
	if job.OutDir == "" {
		return Result{}, &GenerationError{Msg: "no output directory"}
	}
	outDir, err := filepath.Abs(job.OutDir)
	if err != nil {
		return Result{}, &GenerationError{Msg: "no usable output directory", Err: err}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Result{}, &TransientError{Msg: "render " + job.TaskID + ": create output directory", Err: err}
	}
	// The work directory holds the caption and a link to the font, so that
	// the filtergraph names them by plain relative paths and no prompt or
	// path text is ever parsed by ffmpeg's filter syntax. It sits inside
	// outDir so that the finished files are renamed, not copied, into place.
	work, err := os.MkdirTemp(outDir, ".render-")
	if err != nil {
		return Result{}, &TransientError{Msg: "render " + job.TaskID + ": create work directory", Err: err}
	}
	defer os.RemoveAll(work)

	fontSize := min(w, h) / 20
	text := caption(job.Prompt, captionWidth(w, fontSize))
	if err := os.WriteFile(filepath.Join(work, captionFile), []byte(text), 0o600); err != nil {
		return Result{}, &TransientError{Msg: "render " + job.TaskID + ": write caption", Err: err}
	}
	if err := os.Symlink(r.cfg.FontFile, filepath.Join(work, fontFile)); err != nil {
		return Result{}, &TransientError{Msg: "render " + job.TaskID + ": link font", Err: err}
	}
	// Images are linked in as input-<n>: ffmpeg then finds their format by
	// content (PNG or JPEG), and no character of the caller's path can be
	// read as a protocol or an image-sequence pattern.
	for n, img := range images {
		images[n] = fmt.Sprintf("input-%d", n)
		if err := os.Symlink(img, filepath.Join(work, images[n])); err != nil {
			return Result{}, &TransientError{Msg: "render " + job.TaskID + ": link input image", Err: err}
		}
	}

	n := p.SampleCount
	spec := frameSpec{w: w, h: h, duration: p.DurationSeconds, fontSize: fontSize,
		audio: p.GenerateAudio, captioned: text != ""}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	paths, posters := make([]string, n), make([]string, n)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmp := filepath.Join(work, fmt.Sprintf("sample-%d.mp4", i))
			tmpPoster := filepath.Join(work, fmt.Sprintf("sample-%d.jpg", i))
			err := r.renderSample(ctx, job, spec, images, i, work, tmp, tmpPoster)
			if err == nil {
				paths[i] = filepath.Join(outDir, fmt.Sprintf("sample-%d.mp4", i))
				if rerr := os.Rename(tmp, paths[i]); rerr != nil {
					err = &TransientError{Msg: "render " + job.TaskID + ": move video into place", Err: rerr}
				}
			}
			if err == nil {
				// A poster that is not there is none: the workflow then
				// makes one from the video.
				if os.Rename(tmpPoster, filepath.Join(outDir, fmt.Sprintf("sample-%d.jpg", i))) == nil {
					posters[i] = filepath.Join(outDir, fmt.Sprintf("sample-%d.jpg", i))
				}
			}
			if err != nil {
				// The first failure is the cause; the others are its cancellation.
				errOnce.Do(func() { firstErr = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		for _, p := range append(paths, posters...) {
			if p != "" {
				os.Remove(p)
			}
		}
		return Result{}, firstErr
	}
	return Result{Paths: paths, Posters: posters}, nil
}

// Estimate is the expected render time of a generation with parameters p,
// as a range for the start response's estimatedWaitTime: the low end with
// the samples rendered side by side on an idle machine, the high end with
// every ffmpeg slot busy. Queueing before the render starts is not in it.
func (r *Renderer) Estimate(p params.Parameters) (lo, hi time.Duration) {
	w, h, err := frameSize(p.AspectRatio, p.Resolution)
	if err != nil {
		w, h = 1920, 1080
	}
	samples := max(p.SampleCount, 1)
	// Measured on a 2-core machine: about 100 million pixel-frames a
	// second for the heaviest graph, plus process start-up.
	perSample := 300*time.Millisecond +
		time.Duration(float64(w*h*max(p.DurationSeconds, 1)*FPS)/100e6*float64(time.Second))
	lo = perSample * time.Duration((samples+r.cfg.MaxConcurrent-1)/r.cfg.MaxConcurrent)
	hi = 2*perSample*time.Duration(samples) + time.Second
	lo = max(lo.Truncate(time.Second), time.Second)
	hi = max((hi + time.Second - 1).Truncate(time.Second), lo+time.Second)
	return lo, hi
}

// frameSize is the frame in pixels for an aspect ratio and resolution.
func frameSize(aspect, resolution string) (w, h int, err error) {
	var long, short int
	switch resolution {
	case "720p":
		long, short = 1280, 720
	case "1080p":
		long, short = 1920, 1080
	default:
		return 0, 0, fmt.Errorf("unknown resolution %q", resolution)
	}
	switch aspect {
	case "16:9":
		return long, short, nil
	case "9:16":
		return short, long, nil
	}
	return 0, 0, fmt.Errorf("unknown aspect ratio %q", aspect)
}

// inputImages checks that the job has the images its type needs, as
// absolute paths (ffmpeg runs in the work directory).
func inputImages(job Job) ([]string, error) {
	var roles []string
	switch job.Type {
	case catalog.TextToVideo:
	case catalog.ImageToVideo:
		roles = []string{task.RoleImage}
	case catalog.FirstLastFrame:
		roles = []string{task.RoleFirstFrame, task.RoleLastFrame}
	default:
		return nil, fmt.Errorf("unknown task type %q", job.Type)
	}
	var out []string
	for _, role := range roles {
		p, ok := job.Images[role]
		if !ok || p == "" {
			return nil, fmt.Errorf("%s needs the %s image", job.Type, role)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%s image: %w", role, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("%s image: %w", role, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// errKilled marks an ffmpeg that died of a signal rather than exiting.
var errKilled = errors.New("ffmpeg was killed")
