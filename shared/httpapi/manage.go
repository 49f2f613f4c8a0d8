package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/wire"
)

// cancel answers the cancelled task's status body: status failed, error
// code CANCELLED, creditsRefunded its cost.
func (a *API) cancel(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	t, err := a.svc.Cancel(r.Context(), *c, taskID(r))
	if err != nil {
		return err
	}
	return a.writeStatus(w, r, t)
}

// deleteTask answers 204 and no body once the task and its objects are
// gone.
func (a *API) deleteTask(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	if err := a.svc.Delete(r.Context(), *c, taskID(r)); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Ledger page bounds, as history's.
const (
	defaultLedgerLimit = 20
	maxLedgerLimit     = 100
)

func (a *API) credits(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", defaultLedgerLimit, 1, maxLedgerLimit)
	if err != nil {
		return err
	}
	var before int64
	pos, ok, err := a.openCursor(r.Context(), q, listLedger, c, "cursor must be a pagination.nextCursor this endpoint returned.")
	if err != nil {
		return err
	}
	if ok {
		seq, err := strconv.ParseInt(pos, 10, 64)
		if err != nil || seq <= 0 { // sealed by this server: never
			return fmt.Errorf("ledger cursor holds %q", pos)
		}
		before = seq
	}
	cr, err := a.svc.Credits(r.Context(), *c, store.LedgerQuery{Before: before, Limit: limit})
	if err != nil {
		return err
	}
	window := func(w service.LimitWindow) wire.LimitWindow {
		return wire.LimitWindow{Limit: w.Limit, Remaining: w.Remaining, Reset: wire.TimeOf(w.Reset)}
	}
	resp := wire.Credits{
		Success:  true,
		Balance:  cr.Balance,
		Held:     cr.Held,
		InFlight: cr.InFlight,
		Tier:     cr.Tier,
		Limits: wire.CreditLimits{
			RequestsPerMinute: window(cr.Requests),
			RequestsPerDay:    window(cr.Day),
			ConcurrentGenerations: wire.LimitWindow{Limit: cr.InFlightLimit,
				Remaining: max(cr.InFlightLimit-cr.InFlight, 0)},
		},
		Ledger:     make([]wire.LedgerEntry, 0, len(cr.Ledger)),
		Pagination: wire.LedgerPagination{Limit: limit, HasMore: cr.Next > 0},
	}
	if resp.SpendingCaps, err = a.spending(r, c, c.Key.Caps); err != nil {
		return err
	}
	if cr.Starts.Limit > 0 {
		s := window(cr.Starts)
		resp.Limits.StartsPerMinute = &s
	}
	if cr.Next > 0 {
		// The position is the ledger's sequence, shared by every
		// account: sealed, so that its gaps do not tell a client how
		// busy the others are (issue 20).
		next, err := a.sealCursor(r.Context(), listLedger, c, strconv.FormatInt(cr.Next, 10))
		if err != nil {
			return err
		}
		resp.Pagination.NextCursor = next
	}
	for _, e := range cr.Ledger {
		resp.Ledger = append(resp.Ledger, wire.LedgerEntry{Kind: e.Kind, Amount: e.Amount, Balance: e.Balance,
			TaskID: e.TaskID, Note: e.Note, At: wire.TimeOf(e.At)})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
