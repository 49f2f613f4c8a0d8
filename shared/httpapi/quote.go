package httpapi

import (
	"fmt"
	"net/http"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
)

// quoteResponse is the 200 of POST /api/gen/quote/{endpoint} (an
// extension of the contract, README "Quotes"): what the start with the
// same body would charge now and whether it would be let through.
type quoteResponse struct {
	Success  bool   `json:"success"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// CreditsRequired is the creditsUsed the start would answer.
	CreditsRequired int `json:"creditsRequired"`
	// Balance is the balance now; BalanceAfter what the start would
	// leave (negative when the balance cannot pay it).
	Balance      int64 `json:"balance"`
	BalanceAfter int64 `json:"balanceAfter"`
	// Allowed: the start would be let through now. Otherwise Refusal is
	// the error it would be answered with.
	Allowed bool          `json:"allowed"`
	Refusal *quoteRefusal `json:"refusal,omitempty"`
}

// quoteRefusal is the refusal a start would get now: its status, its
// error code and message, and for a limit when to retry.
type quoteRefusal struct {
	Status     int    `json:"status"`
	Error      string `json:"error"`
	Message    string `json:"message"`
	RetryAfter int    `json:"retryAfter,omitempty"`
}

// imageRoles are the file fields of each image start, for the quote,
// which reads any start's body.
var imageRoles = map[string][]string{
	catalog.ImageToVideo:   {task.RoleImage},
	catalog.FirstLastFrame: {task.RoleFirstFrame, task.RoleLastFrame},
}

// quote answers what the start of {endpoint} with this body would do,
// reading the body exactly as that start does (readStart) and deciding
// as it would (service.Quote); it charges nothing, counts no start and
// creates no task. The images of an image start are checked as the start
// checks them, then deleted.
func (a *API) quote(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	kind := r.PathValue("endpoint")
	if kind == extendEndpoint {
		return a.quoteExtension(w, r, c)
	}
	if kind != catalog.TextToVideo && imageRoles[kind] == nil {
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: fmt.Sprintf("No start endpoint %q to quote; quote text-to-video, image-to-video or first-last-frame.", kind)}
	}
	req, err := a.readStart(w, r, c, kind)
	if err != nil {
		return err
	}
	defer a.deleteInputs(r.Context(), req.Inputs)
	q, err := a.svc.Quote(r.Context(), *c, req)
	if err != nil {
		return err
	}
	a.writeQuote(w, c, kind, q)
	return nil
}

// writeQuote answers q, the quote of a start of kind.
func (a *API) writeQuote(w http.ResponseWriter, c *service.Caller, kind string, q service.Quote) {
	resp := quoteResponse{
		Success: true, Endpoint: kind, Model: q.Task.Model,
		CreditsRequired: q.Task.CreditsCost, Balance: q.Balance, BalanceAfter: q.After,
		Allowed: q.Refusal == nil,
	}
	if q.Refusal != nil {
		e := toError(q.Refusal, c.Now)
		resp.Refusal = &quoteRefusal{Status: e.Status, Error: e.Code, Message: e.Message}
		if e.RateLimit != nil {
			resp.Refusal.RetryAfter = max(e.RateLimit.RetryAfter, 1)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
