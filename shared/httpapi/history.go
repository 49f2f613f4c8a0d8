package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// History page bounds (infra/docs/contract.md).
const (
	defaultHistoryLimit = 20
	maxHistoryLimit     = 100
)

// historyResponse is the history endpoint's 200.
type historyResponse struct {
	Success    bool          `json:"success"`
	Videos     []historyItem `json:"videos"`
	Pagination pagination    `json:"pagination"`
}

type pagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Skip    int  `json:"skip"`
	HasMore bool `json:"hasMore"`
}

// historyItem is one task of the history. APIKey is the name label of the
// key that started it, never the key.
type historyItem struct {
	TaskID          string      `json:"taskId"`
	Type            string      `json:"type"`
	Model           string      `json:"model"`
	Prompt          string      `json:"prompt"`
	Status          task.Status `json:"status"`
	CreditsCost     int         `json:"creditsCost"`
	CreatedAt       string      `json:"createdAt"`
	CompletedAt     string      `json:"completedAt,omitempty"`
	ProcessingTime  *int        `json:"processingTime,omitempty"`
	VideoCount      int         `json:"videoCount"`
	APIKey          string      `json:"apiKey"`
	HasImage        bool        `json:"hasImage"`
	Error           *failure    `json:"error,omitempty"`
	CreditsRefunded *int        `json:"creditsRefunded,omitempty"`
}

func (a *API) history(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", defaultHistoryLimit, 1, maxHistoryLimit)
	if err != nil {
		return err
	}
	skip, err := intParam(q, "skip", 0, 0, -1)
	if err != nil {
		return err
	}
	var status task.Status
	if vs, ok := q["status"]; ok {
		s, ok := task.ParseStatus(vs[0])
		if len(vs) > 1 || !ok {
			return &Error{Status: http.StatusBadRequest, Code: CodeValidation, Field: "status", Value: vs[0],
				Message: "status must be one of pending, processing, completed, failed."}
		}
		status = s
	}

	tasks, total, err := a.svc.History(r.Context(), *c, store.TaskQuery{Status: status, Skip: skip, Limit: limit})
	if err != nil {
		return err
	}
	resp := historyResponse{
		Success:    true,
		Videos:     make([]historyItem, 0, len(tasks)),
		Pagination: pagination{Total: total, Limit: limit, Skip: skip, HasMore: skip+len(tasks) < total},
	}
	for _, t := range tasks {
		it := historyItem{
			TaskID:      t.ID,
			Type:        t.Type,
			Model:       t.Model,
			Prompt:      t.Prompt,
			Status:      t.Status,
			CreditsCost: t.CreditsCost,
			CreatedAt:   formatTime(t.CreatedAt),
			VideoCount:  len(t.Videos),
			APIKey:      t.KeyName,
			HasImage:    t.HasImage(),
		}
		it.CompletedAt, it.ProcessingTime, it.Error, it.CreditsRefunded = outcome(t)
		resp.Videos = append(resp.Videos, it)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// intParam reads an optional integer query parameter in [min, max] (max
// < 0: unbounded). Anything else, a repeated parameter included, is a 400
// naming it.
func intParam(q url.Values, name string, def, min, max int) (int, error) {
	vs, ok := q[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || len(vs) > 1 || n < min || (max >= 0 && n > max) {
		msg := fmt.Sprintf("%s must be an integer of at least %d.", name, min)
		if max >= 0 {
			msg = fmt.Sprintf("%s must be an integer from %d to %d.", name, min, max)
		}
		return 0, &Error{Status: http.StatusBadRequest, Code: CodeValidation, Field: name, Value: vs[0], Message: msg}
	}
	return n, nil
}
