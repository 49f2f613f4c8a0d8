package openaiapi

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
)

func TestContractFields(t *testing.T) {
	tests := []struct {
		in        map[string]string
		want      map[string][]string
		wantParam string
	}{
		{map[string]string{"prompt": "p"}, map[string][]string{"prompt": {"p"}}, ""},
		{map[string]string{"prompt": "p", "model": "m", "seconds": "4", "size": "720x1280"},
			map[string][]string{"prompt": {"p"}, "model": {"m"}, "durationSeconds": {"4"}, "aspectRatio": {"9:16"}, "resolution": {"720p"}}, ""},
		{map[string]string{"size": "1920x1080"}, map[string][]string{"aspectRatio": {"16:9"}, "resolution": {"1080p"}}, ""},
		{map[string]string{"size": "3840x2160"}, map[string][]string{"aspectRatio": {"16:9"}, "resolution": {"4k"}}, ""},
		{map[string]string{"size": "2160x3840"}, map[string][]string{"aspectRatio": {"9:16"}, "resolution": {"4k"}}, ""},
		{map[string]string{"size": "4096x2160"}, nil, "size"},
		{map[string]string{"seconds": "12"}, nil, "seconds"},
		{map[string]string{"seconds": "four"}, nil, "seconds"},
		{map[string]string{"size": "1024x1792"}, nil, "size"},
		{map[string]string{"n": "2"}, nil, "n"},
	}
	for _, tt := range tests {
		got, err := ContractFields(tt.in)
		var pe *params.Error
		switch {
		case tt.wantParam != "":
			if !errors.As(err, &pe) || pe.Field != tt.wantParam {
				t.Errorf("ContractFields(%v) = %v, %v; want an error on %s", tt.in, got, err, tt.wantParam)
			}
		case err != nil || !reflect.DeepEqual(got, tt.want):
			t.Errorf("ContractFields(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestExtensionFields(t *testing.T) {
	tests := []struct {
		in        map[string]string
		want      map[string][]string
		wantID    string
		wantParam string
	}{
		{map[string]string{"prompt": "p", "video[id]": "gen_1_a"}, map[string][]string{"prompt": {"p"}}, "gen_1_a", ""},
		{map[string]string{"prompt": "p", "seconds": "8", "video[id]": "gen_1_a"},
			map[string][]string{"prompt": {"p"}, "durationSeconds": {"8"}}, "gen_1_a", ""},
		{map[string]string{"prompt": "p"}, nil, "", "video"},
		{map[string]string{"prompt": "p", "video[id]": ""}, nil, "", "video"},
		{map[string]string{"prompt": "p", "seconds": "20", "video[id]": "gen_1_a"}, nil, "", "seconds"},
		{map[string]string{"prompt": "p", "model": "m", "video[id]": "gen_1_a"}, nil, "", "model"},
		{map[string]string{"prompt": "p", "size": "1280x720", "video[id]": "gen_1_a"}, nil, "", "size"},
	}
	for _, tt := range tests {
		got, id, err := ExtensionFields(tt.in)
		var pe *params.Error
		switch {
		case tt.wantParam != "":
			if !errors.As(err, &pe) || pe.Field != tt.wantParam {
				t.Errorf("ExtensionFields(%v) = %v, %q, %v; want an error on %s", tt.in, got, id, err, tt.wantParam)
			}
		case err != nil || id != tt.wantID || !reflect.DeepEqual(got, tt.want):
			t.Errorf("ExtensionFields(%v) = %v, %q, %v; want %v, %q", tt.in, got, id, err, tt.want, tt.wantID)
		}
	}
}

// TestFromTaskExtension: an extension's seconds is the stitched whole
// (OpenAI's Video.seconds: "For extensions, this is the stitched total
// duration"), its size the video's.
func TestFromTaskExtension(t *testing.T) {
	tk := task.Task{ID: "gen_1_b", Status: task.Pending, Inputs: []task.Input{{Role: task.RoleVideo, Task: "gen_1_a", Seconds: 8}}}
	tk.Params.DurationSeconds, tk.Params.AspectRatio, tk.Params.Resolution = 8, "9:16", "720p"
	if v := FromTask(tk, 0); v.Seconds != "15" || v.Size != "720x1280" {
		t.Errorf("an extension of 8 s is %q s at %q, want 15 at 720x1280", v.Seconds, v.Size)
	}
}

func TestFromTask(t *testing.T) {
	created := time.Unix(1000, 0)
	base := task.Task{ID: "gen_1_a", Model: "m", Prompt: "p", CreatedAt: created}
	base.Params.DurationSeconds, base.Params.AspectRatio, base.Params.Resolution = 6, "16:9", "720p"
	tests := []struct {
		status   task.Status
		progress int
		want     string
		wantProg int
		done     bool
	}{
		{task.Pending, 0, "queued", 0, false},
		{task.Processing, 40, "in_progress", 40, false},
		{task.Completed, 0, "completed", 100, true},
		{task.Failed, 0, "failed", 0, true},
	}
	for _, tt := range tests {
		tk := base
		tk.Status, tk.Progress = tt.status, tt.progress
		if tt.done {
			tk.CompletedAt = created.Add(time.Minute)
		}
		v := FromTask(tk, 5000)
		if v.Status != tt.want || v.Progress != tt.wantProg || v.Seconds != "6" || v.Size != "1280x720" || v.Object != "video" {
			t.Errorf("FromTask(%s) = %+v", tt.status, v)
		}
		if (v.CompletedAt != nil) != tt.done || (v.ExpiresAt != nil) != (tt.status == task.Completed) || (v.Error != nil) != (tt.status == task.Failed) {
			t.Errorf("FromTask(%s): completed_at %v, expires_at %v, error %v", tt.status, v.CompletedAt, v.ExpiresAt, v.Error)
		}
	}
}

func TestNewError(t *testing.T) {
	tests := []struct {
		status             int
		code, field        string
		wantType, wantParm string
	}{
		{400, "VALIDATION_ERROR", "durationSeconds", "invalid_request_error", "seconds"},
		{400, "VALIDATION_ERROR", "resolution", "invalid_request_error", "size"},
		{400, "MISSING_IMAGE", "image", "invalid_request_error", "input_reference"},
		{400, "VALIDATION_ERROR", "taskId", "invalid_request_error", "video"},
		{401, "UNAUTHORIZED", "", "authentication_error", ""},
		{402, "INSUFFICIENT_CREDITS", "", "insufficient_quota", ""},
		{404, "TASK_NOT_FOUND", "", "not_found_error", ""},
		{409, "TASK_NOT_FINISHED", "", "conflict_error", ""},
		{413, "FILE_TOO_LARGE", "image", "invalid_request_error", "input_reference"},
		{429, "RATE_LIMIT_EXCEEDED", "", "rate_limit_error", ""},
		{503, "SERVICE_UNAVAILABLE", "", "server_error", ""},
	}
	for _, tt := range tests {
		e := NewError(tt.status, tt.code, "m", tt.field).Error
		param := ""
		if e.Param != nil {
			param = *e.Param
		}
		if e.Type != tt.wantType || param != tt.wantParm || e.Code == nil {
			t.Errorf("NewError(%d, %s, %s) = %+v, want type %s param %q", tt.status, tt.code, tt.field, e, tt.wantType, tt.wantParm)
		}
	}
}
