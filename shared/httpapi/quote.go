package httpapi

import (
	"fmt"
	"net/http"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

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
		return &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
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
	resp := wire.Quote{
		Success: true, Endpoint: kind, Model: q.Task.Model,
		CreditsRequired: q.Task.CreditsCost, Balance: q.Balance, BalanceAfter: q.After,
		Allowed: q.Refusal == nil,
	}
	if q.Refusal != nil {
		e := toError(q.Refusal, c.Now)
		resp.Refusal = &wire.QuoteRefusal{Status: e.Status, Code: e.Code, Message: e.Message}
		if e.RateLimit != nil {
			resp.Refusal.RetryAfterSeconds = max(e.RateLimit.RetryAfter, 1)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
