package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
)

// remote is the bench's generator: a provider.Provider shaped like a
// remote provider's API (Veo's, OpenAI's videos), taking no local CPU.
// Submit answers an operation due latency later; Poll answers not done
// with the time left until it is due, then done: it writes each sample,
// a few bytes long, and its poster, a small constant JPEG, as a provider
// that hands a thumbnail does (OpenAI's `variant=thumbnail`). Between
// the two, a task holds only the workflow's Wait state (a timer), no
// goroutine, as with a real route; and no ffmpeg runs for its video or
// poster. The starts measured are then the service's work. It lives in
// this program only: nothing a customer sends can select it, and no
// stack uses it but the one `make bench` starts (devstack.Hooks).
type remote struct {
	latency time.Duration
	// now is the clock; nil means time.Now.
	now func() time.Time
}

var _ provider.Provider = remote{}

// benchOperation begins the name of each of the bench's operations; the
// rest is when it is due, in Unix nanoseconds. The name says it all, so
// the provider keeps no state: a restarted service polls it as well.
const benchOperation = "bench:"

// routeBench is the route the bench's operations are billed to, at no
// cost.
const routeBench = "bench"

func (g remote) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// Submit accepts the job, due latency from now.
func (g remote) Submit(_ context.Context, job provider.Job) (provider.Operation, error) {
	due := g.clock().Add(g.latency)
	return provider.Operation{Name: benchOperation + strconv.FormatInt(due.UnixNano(), 10), PollAfter: g.latency}, nil
}

// Poll answers the time left until the operation is due, then writes
// its videos and posters into job.OutDir.
func (g remote) Poll(_ context.Context, name string, job provider.Job) (provider.Operation, error) {
	nanos, ok := strings.CutPrefix(name, benchOperation)
	n, err := strconv.ParseInt(nanos, 10, 64)
	if !ok || err != nil {
		return provider.Operation{}, fmt.Errorf("not a bench operation: %q", name)
	}
	if left := time.Unix(0, n).Sub(g.clock()); left > 0 {
		return provider.Operation{Name: name, PollAfter: left}, nil
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Operation{}, fmt.Errorf("out dir: %w", err)
	}
	res := provider.Result{}
	for i := range max(job.Params.SampleCount, 1) {
		p := filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := os.WriteFile(p, []byte("bench sample "+job.TaskID), 0o600); err != nil {
			return provider.Operation{}, fmt.Errorf("write sample: %w", err)
		}
		poster := filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.jpg", i))
		if err := os.WriteFile(poster, benchPoster, 0o600); err != nil {
			return provider.Operation{}, fmt.Errorf("write poster: %w", err)
		}
		res.Paths, res.Posters = append(res.Paths, p), append(res.Posters, poster)
	}
	return provider.Operation{Name: name, Done: true, Result: res,
		Billing: provider.Billing{Route: routeBench, ProviderModel: job.Model}}, nil
}

// benchPoster is every bench video's poster: a small grey JPEG, made
// once.
var benchPoster = func() []byte {
	img := image.NewGray(image.Rect(0, 0, 16, 9))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		panic("bench poster: " + err.Error())
	}
	return b.Bytes()
}()
