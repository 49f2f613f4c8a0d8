package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// startsCount reads the caller's starts window as it stands now.
func (e *env) startsCount(keyID string, l store.KeyLimits) int {
	e.t.Helper()
	now := e.Clock.Now()
	g := ratelimit.StartLimits(keyID, l, now)
	n, err := e.faults.Store.Count(context.Background(), *g.Starts, now)
	if err != nil {
		e.t.Fatalf("count starts window: %v", err)
	}
	return n
}

// postStart sends the body of a start of kind (text-to-video as JSON, the
// image starts as a form with their images) to path.
func (e *env) postStart(path, kind, key string, fields map[string]string) response {
	e.t.Helper()
	if kind == catalog.TextToVideo {
		body := map[string]any{}
		for k, v := range fields {
			if n, err := strconv.Atoi(v); err == nil {
				body[k] = n
			} else if b, err := strconv.ParseBool(v); err == nil {
				body[k] = b
			} else {
				body[k] = v
			}
		}
		return e.postJSON(path, key, body)
	}
	var parts []part
	for k, v := range fields {
		parts = append(parts, field(k, v))
	}
	if kind == catalog.ImageToVideo {
		parts = append(parts, file("image", "a.png", pngData))
	} else {
		parts = append(parts, file("firstFrame", "a.png", pngData), file("lastFrame", "b.jpg", jpegData))
	}
	return e.postForm(path, key, parts...)
}

// A quote answers the charge of the start that follows it, for every
// model, mode, sample count and audio choice, and changes nothing: no
// charge, no task, no image kept, no workflow, no start counted.
func TestQuoteEqualsStart(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1_000_000)
	for _, m := range catalog.All() {
		for _, kind := range []string{catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame} {
			if !m.Supports(kind) {
				continue
			}
			for n := 1; n <= params.MaxSampleCount; n++ {
				for _, audio := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/%d/audio=%v", m.ID, kind, n, audio), func(t *testing.T) {
						fields := map[string]string{"prompt": "a quiet harbour at dawn", "model": m.ID,
							"sampleCount": strconv.Itoa(n), "generateAudio": strconv.FormatBool(audio)}
						before, starts := e.state(c.AccountID), e.startsCount(c.KeyID, roomy)
						q := e.postStart("/api/gen/quote/"+kind, kind, c.Key, fields)
						if q.status != http.StatusOK || q.body["allowed"] != true || q.body["endpoint"] != kind || q.body["model"] != m.ID {
							t.Fatalf("quote: %d %s; want 200, allowed, endpoint %s, model %s", q.status, q.raw, kind, m.ID)
						}
						e.assertUnchanged(before, c.AccountID, "a quote")
						if got := e.startsCount(c.KeyID, roomy); got != starts {
							t.Errorf("starts window went from %d to %d after a quote", starts, got)
						}
						if got, want := num(t, q.body, "creditsRequired"), int64(m.Price(audio)*n); got != want {
							t.Errorf("quote creditsRequired = %d, want the catalog's %d", got, want)
						}
						if got := num(t, q.body, "balance"); got != before.Credits {
							t.Errorf("quote balance = %d, want %d", got, before.Credits)
						}
						s := e.postStart("/api/gen/"+kind, kind, c.Key, fields)
						if s.status != http.StatusAccepted {
							t.Fatalf("start: %d %s", s.status, s.raw)
						}
						if got, want := num(t, s.body, "creditsUsed"), num(t, q.body, "creditsRequired"); got != want {
							t.Errorf("start charged %d, quote said %d", got, want)
						}
						if got, want := num(t, s.body, "remainingCredits"), num(t, q.body, "balanceAfter"); got != want {
							t.Errorf("start left %d, quote said %d", got, want)
						}
					})
				}
			}
		}
	}
}

// A quote names the limit that would refuse the start now, with the
// code the start would get, and still changes nothing; a body the start
// would refuse is refused alike.
func TestQuoteRefusals(t *testing.T) {
	e := newEnv(t, nil)
	const path = "/api/gen/quote/text-to-video"
	lite := map[string]any{"prompt": "x", "model": "gen-3.1-lite-generate-001", "generateAudio": false}

	poor := e.caller(10)
	before := e.state(poor.AccountID)
	r := e.postJSON(path, poor.Key, lite)
	if r.status != 200 || r.body["allowed"] != false || num(t, r.body, "balanceAfter") != -25 {
		t.Fatalf("quote without credits: %d %s; want 200, not allowed, balanceAfter -25", r.status, r.raw)
	}
	if ref := obj(t, r.body, "refusal"); ref["error"] != "INSUFFICIENT_CREDITS" || num(t, ref, "status") != 402 {
		t.Errorf("refusal = %v, want 402 INSUFFICIENT_CREDITS", ref)
	}
	e.assertUnchanged(before, poor.AccountID, "a refused quote")

	// One start a minute: the start uses it, the quote then names the window.
	one := store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 1000, StartsPerMinute: 1, MaxInFlight: 5}
	c := httpapitest.NewCaller(t, e.faults.Store, 1000, ratelimit.Enterprise, one)
	if r := e.postJSON("/api/gen/text-to-video", c.Key, lite); r.status != 202 {
		t.Fatalf("start: %d %s", r.status, r.raw)
	}
	r = e.postJSON(path, c.Key, lite)
	ref := obj(t, r.body, "refusal")
	if r.body["allowed"] != false || ref["error"] != "RATE_LIMIT_EXCEEDED" || num(t, ref, "status") != 429 || num(t, ref, "retryAfter") < 1 {
		t.Errorf("quote over the starts window: %s; want a 429 RATE_LIMIT_EXCEEDED refusal with retryAfter", r.raw)
	}
	if got := e.startsCount(c.KeyID, one); got != 1 {
		t.Errorf("starts window holds %d, want 1 (the start, not the quote)", got)
	}

	// The start's own validation answers an invalid body, and an unknown
	// endpoint is not found.
	before = e.state(poor.AccountID)
	wantError(t, e.postJSON(path, poor.Key, map[string]any{"prompt": ""}), 400, "INVALID_PROMPT")
	wantError(t, e.postJSON(path, poor.Key, map[string]any{"prompt": "x", "model": "nope"}), 400, "INVALID_MODEL")
	wantError(t, e.postJSON("/api/gen/quote/history", poor.Key, lite), 404, "NOT_FOUND")
	wantError(t, e.postForm("/api/gen/quote/image-to-video", poor.Key, field("prompt", "x")), 400, "MISSING_IMAGE")
	e.assertUnchanged(before, poor.AccountID, "refused quotes")
}

// maxCredits bounds a start's price: over it, the start and its quote are
// a 402 MAX_CREDITS_EXCEEDED and nothing changes; at it, the start runs.
func TestMaxCredits(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	lite := map[string]any{"prompt": "x", "model": "gen-3.1-lite-generate-001", "generateAudio": false, "sampleCount": 2}
	for _, path := range []string{"/api/gen/quote/text-to-video", "/api/gen/text-to-video"} {
		before := e.state(c.AccountID)
		lite["maxCredits"] = 69
		r := e.postJSON(path, c.Key, lite)
		wantError(t, r, 402, "MAX_CREDITS_EXCEEDED")
		if d := obj(t, r.body, "details"); num(t, d, "creditsRequired") != 70 || num(t, d, "maxCredits") != 69 || r.body["field"] != "maxCredits" {
			t.Errorf("%s over maxCredits: %s; want field maxCredits, details 70 and 69", path, r.raw)
		}
		e.assertUnchanged(before, c.AccountID, path+" over maxCredits")
	}
	lite["maxCredits"] = 70
	if r := e.postJSON("/api/gen/text-to-video", c.Key, lite); r.status != 202 || num(t, r.body, "creditsUsed") != 70 {
		t.Errorf("start at maxCredits: %d %s; want 202 charging 70", r.status, r.raw)
	}
	ct, body := multipartBody(t, field("prompt", "x"), field("model", "gen-3.1-lite-generate-001"), field("maxCredits", "10"), file("image", "a.png", pngData))
	wantError(t, e.do("POST", "/api/gen/image-to-video", c.Key, ct, bytes.NewReader(body)), 402, "MAX_CREDITS_EXCEEDED")
	wantError(t, e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x", "maxCredits": 0}), 400, "VALIDATION_ERROR")
}
