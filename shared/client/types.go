package client

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/genvideo/gen/shared/wire"
)

// The client's requests and answers are the contract's own types
// (shared/wire), which the service writes: they cannot drift apart, and
// every answer of the OpenAPI document decodes into them with no member
// left over (shared/testing/openapitest).

// Model ids.
const (
	ModelQuality = "gen-3.1-generate-001"
	ModelFast    = "gen-3.1-fast-generate-001"
	ModelLite    = "gen-3.1-lite-generate-001"
)

// Status is where a task is in its lifecycle.
type Status = wire.Status

// The four statuses.
const (
	StatusPending    = wire.StatusPending
	StatusProcessing = wire.StatusProcessing
	StatusCompleted  = wire.StatusCompleted
	StatusFailed     = wire.StatusFailed
)

// Request is what a start call sends: a prompt and optional parameters.
// A zero field (a nil pointer) is left to the service's default.
type Request = wire.StartRequest

// formFields is r as the text fields of a multipart start.
func formFields(r Request) [][2]string {
	f := [][2]string{{"prompt", r.Prompt}}
	add := func(name, v string) {
		if v != "" {
			f = append(f, [2]string{name, v})
		}
	}
	add("model", r.Model)
	if r.SampleCount != 0 {
		add("sampleCount", strconv.Itoa(r.SampleCount))
	}
	if r.DurationSeconds != 0 {
		add("durationSeconds", strconv.Itoa(r.DurationSeconds))
	}
	add("aspectRatio", r.AspectRatio)
	add("resolution", r.Resolution)
	if r.GenerateAudio != nil {
		add("generateAudio", strconv.FormatBool(*r.GenerateAudio))
	}
	if r.EnhancePrompt != nil {
		add("enhancePrompt", strconv.FormatBool(*r.EnhancePrompt))
	}
	add("negativePrompt", r.NegativePrompt)
	if r.Seed != nil {
		add("seed", strconv.FormatInt(*r.Seed, 10))
	}
	add("personGeneration", r.PersonGeneration)
	add("webhookUrl", r.WebhookURL)
	if r.MaxCredits != 0 {
		add("maxCredits", strconv.Itoa(r.MaxCredits))
	}
	return f
}

// Time is a timestamp of an answer: a time.Time (embedded) written as
// the contract writes it.
type Time = wire.Time

// ImageInfo describes an uploaded image as the service received it.
type ImageInfo = wire.ImageInfo

// Started is the answer to a start call. EstimatedWait parses its
// EstimatedWaitTime.
type Started = wire.Started

// decodeStarted reads a start's answer. The cost is creditsUsed, or
// creditsCost in some deployments' answers (the spec's variant).
func decodeStarted(b []byte) (Started, error) {
	var v struct {
		Started
		CreditsCost *int `json:"creditsCost"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Started{}, err
	}
	if v.CreditsCost != nil && v.CreditsUsed == 0 {
		v.CreditsUsed = *v.CreditsCost
	}
	return v.Started, nil
}

// Parameters are the parameters a task runs with, defaults filled in.
type Parameters = wire.Parameters

// Video is one signed download of a completed task.
type Video = wire.Video

// Failure says why a task failed.
type Failure = wire.Failure

// Task is a task as the status endpoint shows it. Its RetryAfter is the
// service's hint, for an unfinished task, of when to poll again.
type Task = wire.Task

// Download is the answer of the download endpoint.
type Download = wire.Download

// HistoryQuery selects a page of the history. Zero fields take the
// service's defaults (20 newest tasks of any status).
type HistoryQuery struct {
	// Status keeps only tasks in this status.
	Status Status
	// Limit is the page size, 1..100.
	Limit int
	Skip  int
	// Cursor is a HistoryPage.NextCursor: the page starts right after
	// the page that returned it, at the cost of the first page however
	// deep it is. Skip counts from it.
	Cursor string
}

// HistoryItem is one task of the history.
type HistoryItem = wire.HistoryItem

// HistoryPage is one page of the history, newest first; its Pagination's
// fields (Total, HasMore, NextCursor, ...) are its own.
type HistoryPage = wire.HistoryPage

// Pagination is where a history page stands.
type Pagination = wire.Pagination

// Pricing is a model's price in credits per video.
type Pricing = wire.Pricing

// Model is one model the service offers.
type Model = wire.Model

// Limits are what a backend accepts for a model (an extension of the
// contract). In each list the first value is the default of a field a
// start leaves out.
type Limits = wire.Limits

// ModelList is the answer of the models endpoint. Models (the method)
// gives one entry per id.
type ModelList = wire.ModelList

// decodeModels reads the models answer: a model's id is modelId, or id
// in one variant of the answer, which may also list a model twice with
// differing descriptions and capabilities; the twins are merged (the
// first description, every capability).
func decodeModels(b []byte) (ModelList, error) {
	var l ModelList
	if err := json.Unmarshal(b, &l); err != nil {
		return ModelList{}, err
	}
	var ids struct {
		Models []struct {
			ID string `json:"id"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		return ModelList{}, err
	}
	for i := range l.Models {
		if l.Models[i].ID == "" && i < len(ids.Models) {
			l.Models[i].ID = ids.Models[i].ID
		}
		if l.Models[i].ID == "" {
			return ModelList{}, fmt.Errorf("model %q has neither modelId nor id", l.Models[i].Name)
		}
	}
	l.Models = merge(l.Models)
	return l, nil
}

// merge folds entries with the same id into the first of them.
func merge(models []Model) []Model {
	var out []Model
	at := map[string]int{}
	for _, m := range models {
		i, seen := at[m.ID]
		if !seen {
			at[m.ID] = len(out)
			m.Capabilities = append([]string(nil), m.Capabilities...)
			out = append(out, m)
			continue
		}
		first := &out[i]
		if first.Name == "" {
			first.Name = m.Name
		}
		if first.Description == "" {
			first.Description = m.Description
		}
		if first.Pricing.CreditsPerVideo == 0 && first.Pricing.CreditsPerVideoNoAudio == 0 && first.Pricing.ByResolution == nil {
			first.Pricing = m.Pricing
		}
		for _, c := range m.Capabilities {
			if !first.Supports(c) {
				first.Capabilities = append(first.Capabilities, c)
			}
		}
	}
	return out
}
