package client_test

import (
	"errors"
	"image/color"
	"testing"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
)

// A quote of each start answers what the start then charges and leaves,
// and moves no credit, on the stack under test (the assembly too).
func TestQuotes(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 10000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := t.Context()
	red := pngImage(t, color.RGBA{200, 20, 20, 255})
	blue := pngImage(t, color.RGBA{20, 20, 200, 255})
	two := client.Request{Prompt: "red to blue", Model: client.ModelFast, DurationSeconds: 4, Resolution: "720p",
		SampleCount: 2, GenerateAudio: new(true)}
	for _, tc := range []struct {
		name  string
		quote func() (*client.Quote, error)
		start func() (*client.Started, error)
	}{
		{"text-to-video",
			func() (*client.Quote, error) { return c.QuoteTextToVideo(ctx, lite("a lighthouse")) },
			func() (*client.Started, error) { return c.TextToVideo(ctx, lite("a lighthouse")) }},
		{"image-to-video",
			func() (*client.Quote, error) { return c.QuoteImageToVideo(ctx, two, client.ImageBytes("red.png", red)) },
			func() (*client.Started, error) { return c.ImageToVideo(ctx, two, client.ImageBytes("red.png", red)) }},
		{"first-last-frame",
			func() (*client.Quote, error) {
				return c.QuoteFirstLastFrame(ctx, two, client.ImageBytes("red.png", red), client.ImageBytes("blue.png", blue))
			},
			func() (*client.Started, error) {
				return c.FirstLastFrame(ctx, two, client.ImageBytes("red.png", red), client.ImageBytes("blue.png", blue))
			}},
	} {
		before, err := c.Credits(ctx, client.CreditsQuery{Limit: 1})
		if err != nil {
			t.Fatalf("Credits: %v", err)
		}
		q, err := tc.quote()
		if err != nil || !q.Allowed || q.Endpoint != tc.name || q.Balance != before.Balance {
			t.Fatalf("%s: quote = %+v, %v; want allowed at balance %d", tc.name, q, err, before.Balance)
		}
		after, err := c.Credits(ctx, client.CreditsQuery{Limit: 1})
		if err != nil || after.Balance != before.Balance || after.InFlight != before.InFlight || after.Ledger[0] != before.Ledger[0] {
			t.Fatalf("%s: the quote moved credits: %+v then %+v (%v)", tc.name, before, after, err)
		}
		s, err := tc.start()
		if err != nil {
			t.Fatalf("%s: start: %v", tc.name, err)
		}
		if s.CreditsUsed != q.CreditsRequired || s.RemainingCredits != q.BalanceAfter {
			t.Errorf("%s: start charged %d leaving %d; the quote said %d leaving %d",
				tc.name, s.CreditsUsed, s.RemainingCredits, q.CreditsRequired, q.BalanceAfter)
		}
	}

	poor := newClient(t, stack.Key(t, 10, store.KeyLimits{}).APIKey)
	q, err := poor.QuoteTextToVideo(ctx, lite("too dear"))
	if err != nil || q.Allowed || q.Refusal == nil || q.Refusal.Status != 402 || q.Refusal.Code != "INSUFFICIENT_CREDITS" {
		t.Errorf("quote without the credits = %+v, %v; want a 402 INSUFFICIENT_CREDITS refusal", q, err)
	}
	// Invalid on purpose: the request is not checked against the document.
	unchecked := clientOf(t, baseURL, k.APIKey, false)
	var ce *client.Error
	if _, err := unchecked.QuoteTextToVideo(ctx, client.Request{Prompt: ""}); !errors.As(err, &ce) || ce.Code != "INVALID_PROMPT" {
		t.Errorf("quote with an empty prompt: %v; want the start's INVALID_PROMPT", err)
	}
}
