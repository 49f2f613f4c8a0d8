// Package taskview shows a task as the contract does: its status body
// (the answer of the status and cancel endpoints, each live event's data
// and each webhook event's) and its history item, both wire types. The
// HTTP layer and the webhook worker share it, so that the worker links
// the task and the wire types, not the HTTP layer.
package taskview

import (
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// Status is t's status body without its videos, whose signed links the
// caller adds (a webhook event never has them: they expire).
func Status(t task.Task) wire.Task {
	w := wire.Task{
		Success:     true,
		TaskID:      t.ID,
		Status:      wire.Status(t.Status),
		Type:        t.Type,
		Model:       t.Model,
		Prompt:      t.Prompt,
		Parameters:  Parameters(t.Params),
		CreditsCost: t.CreditsCost,
		CreatedAt:   wire.TimeOf(t.CreatedAt),
		DownloadURL: wire.DownloadPath(t.ID),
	}
	w.CompletedAt, w.ProcessingTime, w.Error, w.CreditsRefunded = outcome(t)
	w.Route, w.ProviderModel = madeBy(t)
	if t.Status == task.Processing {
		w.Progress = t.Progress
	}
	return w
}

// History is t's history item. APIKey is the name label of the key that
// started it, never the key.
func History(t task.Task) wire.HistoryItem {
	it := wire.HistoryItem{
		TaskID:      t.ID,
		Type:        t.Type,
		Model:       t.Model,
		Prompt:      t.Prompt,
		Status:      wire.Status(t.Status),
		CreditsCost: t.CreditsCost,
		CreatedAt:   wire.TimeOf(t.CreatedAt),
		VideoCount:  len(t.Videos),
		APIKey:      t.KeyName,
		HasImage:    t.HasImage(),
	}
	it.CompletedAt, it.ProcessingTime, it.Error, it.CreditsRefunded = outcome(t)
	it.Route, it.ProviderModel = madeBy(t)
	return it
}

// Parameters are a task's parameters as its status body echoes them.
func Parameters(p params.Parameters) wire.Parameters {
	return wire.Parameters{
		SampleCount:      p.SampleCount,
		DurationSeconds:  p.DurationSeconds,
		AspectRatio:      p.AspectRatio,
		Resolution:       p.Resolution,
		GenerateAudio:    p.GenerateAudio,
		EnhancePrompt:    p.EnhancePrompt,
		NegativePrompt:   p.NegativePrompt,
		Seed:             p.Seed,
		PersonGeneration: p.PersonGeneration,
	}
}

// madeBy is the route and provider model of a completed task, for its
// status and history item; never its cost.
func madeBy(t task.Task) (route, providerModel string) {
	if t.Status != task.Completed {
		return "", ""
	}
	return t.Billing.Route, t.Billing.ProviderModel
}

// outcome is what a finished task adds to its status and history item:
// completedAt (completed or failed), processingTime (completed), error and
// creditsRefunded (failed, or a partial completion's refund).
func outcome(t task.Task) (completedAt wire.Time, processingTime *int, fail *wire.Failure, refunded *int) {
	if !t.Status.Terminal() {
		return wire.Time{}, nil, nil, nil
	}
	if !t.CompletedAt.IsZero() {
		completedAt = wire.TimeOf(t.CompletedAt)
	}
	n := t.CreditsRefunded
	switch t.Status {
	case task.Completed:
		pt := t.ProcessingTime()
		processingTime = &pt
		if n > 0 {
			refunded = &n
		}
	case task.Failed:
		fail = &wire.Failure{Code: task.FailInternal, Message: "the generation failed"}
		if t.Failure != nil {
			fail = &wire.Failure{Code: t.Failure.Code, Message: t.Failure.Message}
		}
		refunded = &n
	}
	return completedAt, processingTime, fail, refunded
}
