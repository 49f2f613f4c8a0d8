package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/rendertest"
)

func newRenderer(t *testing.T, cfg Config) *Renderer {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func defaultParams() params.Parameters {
	return params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9",
		Resolution: "720p", Seed: new(int64(42)), PersonGeneration: "allow_adult"}
}

// frameHashes are the MD5s of the decoded video frames.
func frameHashes(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-").Output()
	if err != nil {
		t.Fatalf("framemd5 %s: %v", path, err)
	}
	var hashes []string
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		hashes = append(hashes, strings.TrimSpace(f[len(f)-1]))
	}
	if len(hashes) == 0 {
		t.Fatalf("framemd5 %s: no frames", path)
	}
	return hashes
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ffmpegRun runs a helper ffmpeg command of a test.
func ffmpegRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ffmpeg", append([]string{"-hide_banner", "-nostdin", "-y"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// testImage writes a PNG made by an ffmpeg source filter.
func testImage(t *testing.T, source string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img.png")
	ffmpegRun(t, "-v", "error", "-f", "lavfi", "-i", source, "-frames:v", "1", path)
	return path
}

// frame writes the first or last frame of a video as a PNG.
func frame(t *testing.T, video string, last bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "frame.png")
	if last {
		ffmpegRun(t, "-v", "error", "-sseof", "-0.5", "-i", video, "-update", "1", path)
	} else {
		ffmpegRun(t, "-v", "error", "-i", video, "-frames:v", "1", path)
	}
	return path
}

var psnrRE = regexp.MustCompile(`average:(\S+)`)

// psnr compares two images of the same size; identical images give +Inf.
func psnr(t *testing.T, a, b string) float64 {
	t.Helper()
	out := ffmpegRun(t, "-i", a, "-i", b, "-lavfi", "psnr", "-f", "null", "-")
	m := psnrRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no PSNR in ffmpeg output:\n%s", out)
	}
	if m[1] == "inf" {
		return math.Inf(1)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("PSNR %q: %v", m[1], err)
	}
	return v
}

// moovBeforeMdat reports whether the MP4 index is at the front
// (+faststart), so that a player can start before the download ends.
func moovBeforeMdat(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	moov, mdat := bytes.Index(b, []byte("moov")), bytes.Index(b, []byte("mdat"))
	return moov >= 0 && mdat >= 0 && moov < mdat
}

// checkPoster checks the poster of sample i: a JPEG of the video's size
// whose picture is the video's first frame.
func checkPoster(t *testing.T, res Result, i, w, h int) {
	t.Helper()
	if len(res.Posters) != len(res.Paths) || res.Posters[i] == "" {
		t.Fatalf("posters %q for videos %q: want one per video", res.Posters, res.Paths)
	}
	b, err := os.ReadFile(res.Posters[i])
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("sample %d: the poster is not a JPEG: %v", i, err)
	}
	if got := img.Bounds(); got.Dx() != w || got.Dy() != h {
		t.Errorf("sample %d: poster %dx%d, video %dx%d", i, got.Dx(), got.Dy(), w, h)
	}
	if got := psnr(t, res.Posters[i], frame(t, res.Paths[i], false)); got < 30 {
		t.Errorf("sample %d: poster vs the video's first frame PSNR = %.1f dB, want >= 30", i, got)
	}
}

func TestGenerateFormat(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	tests := []struct {
		aspect, resolution string
		duration           int
		audio              bool
		wantW, wantH       int
	}{
		{"16:9", "720p", 4, true, 1280, 720},
		{"9:16", "720p", 4, false, 720, 1280},
		{"16:9", "1080p", 4, false, 1920, 1080},
		{"9:16", "1080p", 6, true, 1080, 1920},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s_%s_%ds_audio=%v", tt.aspect, tt.resolution, tt.duration, tt.audio)
		t.Run(name, func(t *testing.T) {
			p := defaultParams()
			p.AspectRatio, p.Resolution, p.DurationSeconds, p.GenerateAudio = tt.aspect, tt.resolution, tt.duration, tt.audio
			res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.TextToVideo,
				Prompt: "a red fox in the snow", Params: p, OutDir: t.TempDir()})
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if len(res.Paths) != 1 {
				t.Fatalf("got %d paths, want 1", len(res.Paths))
			}
			pr := rendertest.Probe(t, res.Paths[0])
			var videos, audios int
			for _, s := range pr.Streams {
				switch s.CodecType {
				case "video":
					videos++
					if s.CodecName != "h264" || s.PixFmt != "yuv420p" {
						t.Errorf("video stream is %s %s, want h264 yuv420p", s.CodecName, s.PixFmt)
					}
					if s.Width != tt.wantW || s.Height != tt.wantH {
						t.Errorf("frame is %dx%d, want %dx%d", s.Width, s.Height, tt.wantW, tt.wantH)
					}
				case "audio":
					audios++
					if s.CodecName != "aac" {
						t.Errorf("audio codec is %s, want aac", s.CodecName)
					}
				}
			}
			if videos != 1 {
				t.Errorf("got %d video streams, want 1", videos)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.audio]; audios != want {
				t.Errorf("got %d audio streams with generateAudio=%v, want %d", audios, tt.audio, want)
			}
			if d := pr.Duration; math.Abs(d-float64(tt.duration)) > 0.1 {
				t.Errorf("duration is %.3f, want %d ± 0.1", d, tt.duration)
			}
			if !moovBeforeMdat(t, res.Paths[0]) {
				t.Errorf("moov atom is not before mdat: not a +faststart file")
			}
			checkPoster(t, res, 0, tt.wantW, tt.wantH)
		})
	}
}

func TestGenerateSamplesAndSeeds(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	gen := func(seed int64, samples int) []string {
		t.Helper()
		p := defaultParams()
		p.Seed, p.SampleCount, p.GenerateAudio = &seed, samples, true
		res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.TextToVideo,
			Prompt: "waves at dusk", Params: p, OutDir: t.TempDir()})
		if err != nil {
			t.Fatalf("Generate(seed %d): %v", seed, err)
		}
		if len(res.Paths) != samples {
			t.Fatalf("Generate(seed %d) gave %d paths, want %d", seed, len(res.Paths), samples)
		}
		return res.Paths
	}
	first := gen(7, 2)
	h0, h1 := frameHashes(t, first[0]), frameHashes(t, first[1])
	if len(h0) != 4*FPS {
		t.Errorf("got %d frames, want %d", len(h0), 4*FPS)
	}
	if equalStrings(h0, h1) {
		t.Errorf("the two samples of one request have identical frames")
	}

	again := gen(7, 2)
	if got := frameHashes(t, again[0]); !equalStrings(got, h0) {
		t.Errorf("same seed, sample 0: frames differ from the first render")
	}
	if got := frameHashes(t, again[1]); !equalStrings(got, h1) {
		t.Errorf("same seed, sample 1: frames differ from the first render")
	}
	a, _ := os.ReadFile(first[0])
	b, _ := os.ReadFile(again[0])
	if !bytes.Equal(a, b) {
		t.Errorf("same seed: files are not byte-identical")
	}

	other := gen(8, 1)
	if got := frameHashes(t, other[0]); equalStrings(got, h0) {
		t.Errorf("seeds 7 and 8 gave identical frames")
	}
}

func TestImageToVideo(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	img := testImage(t, "testsrc2=s=1280x720")
	other := testImage(t, "smptehdbars=s=1280x720")
	p := defaultParams()
	p.SampleCount = 2
	res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.ImageToVideo,
		Prompt: "the picture comes alive", Params: p, Images: map[string]string{task.RoleImage: img}, OutDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(res.Paths) != 2 {
		t.Fatalf("got %d paths, want 2", len(res.Paths))
	}
	for i, path := range res.Paths {
		first := frame(t, path, false)
		if got := psnr(t, first, img); got < 35 {
			t.Errorf("sample %d: first frame vs input image PSNR = %.1f dB, want >= 35", i, got)
		}
		if got := psnr(t, first, other); got > 20 {
			t.Errorf("sample %d: first frame vs an unrelated image PSNR = %.1f dB, want <= 20 (the comparison must discriminate)", i, got)
		}
		// The video moves: its last frame is no longer the input.
		if got := psnr(t, frame(t, path, true), img); got > 30 {
			t.Errorf("sample %d: last frame vs input PSNR = %.1f dB, want < 30 (no animation?)", i, got)
		}
		if n := len(frameHashes(t, path)); n != 4*FPS {
			t.Errorf("sample %d: got %d frames, want %d", i, n, 4*FPS)
		}
		checkPoster(t, res, i, 1280, 720)
	}
	if equalStrings(frameHashes(t, res.Paths[0]), frameHashes(t, res.Paths[1])) {
		t.Errorf("the two samples have identical frames")
	}
}

func TestImageToVideoPadsOtherAspect(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	img := testImage(t, "testsrc2=s=301x199") // odd sizes, landscape into a portrait frame
	p := defaultParams()
	p.AspectRatio = "9:16"
	res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.ImageToVideo,
		Prompt: "portrait", Params: p, Images: map[string]string{task.RoleImage: img}, OutDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	for _, s := range rendertest.Probe(t, res.Paths[0]).Streams {
		if s.CodecType == "video" && (s.Width != 720 || s.Height != 1280) {
			t.Errorf("frame is %dx%d, want 720x1280", s.Width, s.Height)
		}
	}
}

func TestFirstLastFrame(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	firstImg := testImage(t, "testsrc2=s=1280x720")
	lastImg := testImage(t, "smptehdbars=s=1280x720")
	p := defaultParams()
	p.GenerateAudio = true
	res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.FirstLastFrame,
		Prompt: "from one to the other", Params: p, OutDir: t.TempDir(),
		Images: map[string]string{task.RoleFirstFrame: firstImg, task.RoleLastFrame: lastImg}})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	video := res.Paths[0]
	first, last := frame(t, video, false), frame(t, video, true)
	tests := []struct {
		name     string
		a, b     string
		min, max float64
	}{
		{"first frame vs firstFrame", first, firstImg, 35, math.Inf(1)},
		{"last frame vs lastFrame", last, lastImg, 35, math.Inf(1)},
		{"first frame vs lastFrame", first, lastImg, 0, 20},
		{"last frame vs firstFrame", last, firstImg, 0, 20},
	}
	for _, tt := range tests {
		if got := psnr(t, tt.a, tt.b); got < tt.min || got > tt.max {
			t.Errorf("%s: PSNR = %.1f dB, want in [%g, %g]", tt.name, got, tt.min, tt.max)
		}
	}
	if n := len(frameHashes(t, video)); n != 4*FPS {
		t.Errorf("got %d frames, want %d", n, 4*FPS)
	}
	pr := rendertest.Probe(t, video)
	if d := pr.Duration; math.Abs(d-4) > 0.1 {
		t.Errorf("duration is %.3f, want 4 ± 0.1", d)
	}
}

func TestHostilePrompts(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	prompts := []string{
		"it's a \"quoted\" \\ backslash: colon; semi, comma [v] 100% %{localtime} %{eif:1/0:d}\n" +
			"line two\r\n\ttabbed \\n emoji 🎬🦊 ünïcödé 中文 עברית '; rm -rf / #",
		strings.Repeat("very long ", 200),
		" \n\t ", // nothing printable: no caption at all
	}
	for i, prompt := range prompts {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			p := defaultParams()
			p.DurationSeconds = 1 // the caption is under test, not the length
			res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.TextToVideo,
				Prompt: prompt, Params: p, OutDir: t.TempDir()})
			if err != nil {
				t.Fatalf("Generate(%q): %v", prompt, err)
			}
			if n := len(frameHashes(t, res.Paths[0])); n != FPS {
				t.Errorf("got %d frames, want %d", n, FPS)
			}
		})
	}
}

// Fault-injection directives are shared/faults' business: to the renderer
// they are words of the caption.
func TestDirectivesAreWords(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	p := defaultParams()
	p.SampleCount = 2
	p.DurationSeconds = 1
	// Bounded, so that an obeyed [slow:3600] fails rather than hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prompt := "[fail] [policy] [transient] [filter] [slow:3600] a kite"
	res, err := r.Generate(ctx, Job{TaskID: "t", Type: catalog.TextToVideo, Prompt: prompt, Params: p, OutDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Generate(%q): %v", prompt, err)
	}
	if len(res.Paths) != 2 {
		t.Errorf("Generate(%q) gave %d videos, want 2", prompt, len(res.Paths))
	}
}

func TestInputErrors(t *testing.T) {
	r := newRenderer(t, Config{})
	notImage := filepath.Join(t.TempDir(), "bad.png")
	if err := os.WriteFile(notImage, []byte("this is not a picture"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		typ    string
		images map[string]string
		params func(*params.Parameters)
		noOut  bool
	}{
		{"unknown type", "text-to-sound", nil, nil, false},
		{"image missing", catalog.ImageToVideo, nil, nil, false},
		{"last frame missing", catalog.FirstLastFrame, map[string]string{task.RoleFirstFrame: notImage}, nil, false},
		{"image file absent", catalog.ImageToVideo, map[string]string{task.RoleImage: "/nonexistent/x.png"}, nil, false},
		{"undecodable image", catalog.ImageToVideo, map[string]string{task.RoleImage: notImage}, nil, false},
		{"bad aspect", catalog.TextToVideo, nil, func(p *params.Parameters) { p.AspectRatio = "4:3" }, false},
		{"bad resolution", catalog.TextToVideo, nil, func(p *params.Parameters) { p.Resolution = "4k" }, false},
		{"zero samples", catalog.TextToVideo, nil, func(p *params.Parameters) { p.SampleCount = 0 }, false},
		{"zero duration", catalog.TextToVideo, nil, func(p *params.Parameters) { p.DurationSeconds = 0 }, false},
		{"no output directory", catalog.TextToVideo, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultParams()
			if tt.params != nil {
				tt.params(&p)
			}
			out, jobOut := t.TempDir(), ""
			if !tt.noOut {
				jobOut = out
			}
			_, err := r.Generate(context.Background(), Job{TaskID: "t", Type: tt.typ, Prompt: "x",
				Params: p, Images: tt.images, OutDir: jobOut})
			var ge *GenerationError
			if !errors.As(err, &ge) {
				t.Fatalf("got error %v (%T), want *GenerationError", err, err)
			}
			if ge.Classify().Class.FailureCode() != task.FailGeneration {
				t.Errorf("FailureCode() = %q, want %q", ge.Classify().Class.FailureCode(), task.FailGeneration)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("output directory holds %d entries after a failure, want 0", len(entries))
			}
		})
	}
}

func TestNewWithoutFFmpeg(t *testing.T) {
	_, err := New(Config{FFmpegPath: "/nonexistent/ffmpeg"})
	if err == nil || !strings.Contains(err.Error(), "ffmpeg not found: install it with `apt-get install ffmpeg`") {
		t.Errorf("New with a missing ffmpeg: got %v, want an error telling to apt-get install ffmpeg", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = New(Config{})
	if err == nil || !strings.Contains(err.Error(), "ffmpeg not found") {
		t.Errorf("New with no ffmpeg on PATH: got %v, want \"ffmpeg not found\"", err)
	}
}

func TestEstimate(t *testing.T) {
	r := newRenderer(t, Config{MaxConcurrent: 2})
	small := defaultParams()
	big := defaultParams()
	big.Resolution, big.DurationSeconds, big.SampleCount = "1080p", 8, 2
	slo, shi := r.Estimate(small)
	blo, bhi := r.Estimate(big)
	if slo < 1e9 || shi <= slo {
		t.Errorf("Estimate(4s 720p) = %v..%v, want 1s <= min < max", slo, shi)
	}
	if blo <= slo || bhi <= shi {
		t.Errorf("Estimate(8s 1080p x2) = %v..%v, want above 4s 720p's %v..%v", blo, bhi, slo, shi)
	}
	if blo%1e9 != 0 || bhi%1e9 != 0 {
		t.Errorf("Estimate(8s 1080p x2) = %v..%v, want whole seconds", blo, bhi)
	}
}

func TestOneSecondImageVideos(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	// Paths the caller might pick, with characters ffmpeg could misread
	// (an image-sequence pattern, a protocol prefix) and no extension.
	png, err := os.ReadFile(testImage(t, "testsrc2=s=320x240"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, last := filepath.Join(dir, "file:%d img,[0]"), filepath.Join(dir, "last.jpg")
	if err := os.WriteFile(first, png, 0o600); err != nil {
		t.Fatal(err)
	}
	ffmpegRun(t, "-v", "error", "-f", "lavfi", "-i", "smptebars=s=320x240", "-frames:v", "1", last)
	images := map[string]string{task.RoleImage: first, task.RoleFirstFrame: first, task.RoleLastFrame: last}
	for _, typ := range []string{catalog.ImageToVideo, catalog.FirstLastFrame} {
		p := defaultParams()
		p.DurationSeconds, p.GenerateAudio = 1, true
		res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: typ, Prompt: "short",
			Params: p, Images: images, OutDir: t.TempDir()})
		if err != nil {
			t.Errorf("%s of 1 s: %v", typ, err)
			continue
		}
		if n := len(frameHashes(t, res.Paths[0])); n != FPS {
			t.Errorf("%s of 1 s: got %d frames, want %d", typ, n, FPS)
		}
	}
}
