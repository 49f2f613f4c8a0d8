package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/genvideo/gen/shared/client"
)

// Generate a video, wait for it and save it. (The tests run the examples
// against the real local service; GEN_BASE_URL and GEN_API_KEY point at
// it.)
func Example() {
	ctx := context.Background()
	c, err := client.New(os.Getenv("GEN_BASE_URL"), os.Getenv("GEN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	started, err := c.TextToVideo(ctx, client.Request{
		Prompt:          "a paper boat drifting on a pond at dawn",
		Model:           client.ModelLite,
		DurationSeconds: 4,
		GenerateAudio:   new(false),
	}, client.WithIdempotencyKey(client.NewIdempotencyKey())) // safe to retry
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("started:", started.Status, started.CreditsUsed, "credits")

	task, err := c.Wait(ctx, started.TaskID, client.WaitOptions{Timeout: 5 * time.Minute})
	var timeout *client.WaitTimeoutError
	if errors.As(err, &timeout) {
		fmt.Println("still running; poll it later:", timeout.TaskID)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "videos")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	paths, err := c.SaveVideos(ctx, task.TaskID, dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status+":", len(paths), "video")
	// Output:
	// started: pending 35 credits
	// completed: 1 video
}

func ExampleClient_Models() {
	c, err := client.New(os.Getenv("GEN_BASE_URL"), os.Getenv("GEN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	models, err := c.Models(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range models.Models {
		fmt.Printf("%s: %d credits, %d without audio\n", m.ID, m.Pricing.CreditsPerVideo, m.Pricing.CreditsPerVideoNoAudio)
	}
	fmt.Println("default:", models.DefaultModel)
	// Output:
	// gen-3.1-generate-001: 500 credits, 250 without audio
	// gen-3.1-fast-generate-001: 190 credits, 120 without audio
	// gen-3.1-lite-generate-001: 65 credits, 35 without audio
	// default: gen-3.1-fast-generate-001
}

func ExampleError() {
	c, err := client.New(os.Getenv("GEN_BASE_URL"), os.Getenv("GEN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.TextToVideo(context.Background(), client.Request{Prompt: "two boats", SampleCount: 3})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.Field, apiErr.Value)
	}
	// Output:
	// 400 VALIDATION_ERROR sampleCount 3
}

func ExampleClient_AllHistory() {
	c, err := client.New(os.Getenv("GEN_BASE_URL"), os.Getenv("GEN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	credits := 0
	for item, err := range c.AllHistory(context.Background(), client.HistoryQuery{Status: client.StatusCompleted}) {
		if err != nil {
			log.Fatal(err)
		}
		credits += item.CreditsCost
	}
	fmt.Println("credits spent on completed videos:", credits)
}

func ExampleClient_Wait() {
	c, err := client.New(os.Getenv("GEN_BASE_URL"), os.Getenv("GEN_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	task, err := c.Wait(context.Background(), "gen_1763000000000_k3x9q2m7za", client.WaitOptions{
		Timeout: 10 * time.Minute,
		OnPoll:  func(t *client.Task) { fmt.Fprintln(os.Stderr, "status:", t.Status) },
	})
	var failed *client.GenerationError
	switch {
	case errors.As(err, &failed):
		fmt.Println("failed:", failed.Code, "- refunded", failed.CreditsRefunded, "credits")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(len(task.Videos), "videos ready")
	}
}
