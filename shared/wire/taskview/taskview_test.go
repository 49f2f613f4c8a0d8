package taskview_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire/taskview"
)

// Each state of a task shows what the contract says of it, and only
// that: the members present in its status body and history item.
func TestStatusAndHistory(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	base := task.Task{ID: "gen_1_a", Type: "text-to-video", Model: "m", Prompt: "p", CreditsCost: 10, CreatedAt: at, KeyName: "ci",
		Params:  params.Parameters{SampleCount: 2, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p", PersonGeneration: "allow_adult"},
		Billing: task.Billing{Route: "r1", ProviderModel: "pm"}}
	pending := base
	pending.Status = task.Pending
	processing := base
	processing.Status, processing.Progress = task.Processing, 40
	completed := base
	completed.Status, completed.StartedAt, completed.CompletedAt = task.Completed, at, at.Add(61*time.Second)
	completed.CreditsRefunded, completed.Videos = 5, []task.Video{{Key: "v"}}
	failed := base
	failed.Status, failed.CompletedAt, failed.CreditsRefunded = task.Failed, at.Add(time.Second), 10
	cancelled := failed
	cancelled.Failure = &task.Failure{Code: task.FailCancelled, Message: "cancelled"}

	for _, tc := range []struct {
		name          string
		t             task.Task
		status, extra string // the members past the common ones, and those of history
		history       string
	}{
		{"pending", pending, `"status":"pending"`, ``, `"status":"pending"`},
		{"processing", processing, `"status":"processing"`, `"progress":40`, `"status":"processing"`},
		{"completed", completed, `"status":"completed"`,
			`"completedAt":"2030-01-02T03:05:06.678Z","processingTime":61,"route":"r1","providerModel":"pm","creditsRefunded":5`,
			`"status":"completed","creditsCost":10,"createdAt":"2030-01-02T03:04:05.678Z","completedAt":"2030-01-02T03:05:06.678Z","processingTime":61,"videoCount":1`},
		{"failed without a reason", failed, `"status":"failed"`,
			`"completedAt":"2030-01-02T03:04:06.678Z","error":{"code":"INTERNAL_ERROR","message":"the generation failed"},"creditsRefunded":10`,
			`"error":{"code":"INTERNAL_ERROR","message":"the generation failed"},"creditsRefunded":10`},
		{"cancelled", cancelled, `"status":"failed"`, `"error":{"code":"CANCELLED","message":"cancelled"},"creditsRefunded":10`, `"error":{"code":"CANCELLED"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(taskview.Status(tc.t))
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			for _, want := range []string{`{"success":true,"taskId":"gen_1_a",` + tc.status + `,"type":"text-to-video"`,
				`"parameters":{"sampleCount":2,"durationSeconds":8,"aspectRatio":"16:9","resolution":"720p","generateAudio":false,"enhancePrompt":false,"personGeneration":"allow_adult"}`,
				`"createdAt":"2030-01-02T03:04:05.678Z"`, tc.extra, `"downloadUrl":"/api/gen/download/gen_1_a"}`} {
				if !strings.Contains(s, want) {
					t.Errorf("status body %s\nlacks %s", s, want)
				}
			}
			// Who made the videos is said of a completed task only;
			// progress of one processing.
			if strings.Contains(s, `"route"`) != (tc.t.Status == task.Completed) || strings.Contains(s, `"progress"`) != (tc.t.Status == task.Processing) {
				t.Errorf("status body %s: route or progress where they do not belong", s)
			}
			if strings.Contains(s, `"videos"`) {
				t.Errorf("status body %s has videos: they are the caller's to sign", s)
			}
			h, _ := json.Marshal(taskview.History(tc.t))
			if !strings.Contains(string(h), tc.history) || !strings.Contains(string(h), `"apiKey":"ci","hasImage":false`) {
				t.Errorf("history item %s\nlacks %s", h, tc.history)
			}
		})
	}
}
