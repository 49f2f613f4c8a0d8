package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
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

// creditsResponse is the credits endpoint's 200.
type creditsResponse struct {
	Success bool  `json:"success"`
	Balance int64 `json:"balance"`
	// Held is what the generations in flight were charged.
	Held       int64            `json:"held"`
	InFlight   int              `json:"inFlight"`
	Tier       string           `json:"tier"`
	Limits     creditsLimits    `json:"limits"`
	Ledger     []ledgerEntry    `json:"ledger"`
	Pagination ledgerPagination `json:"pagination"`
	// SpendingCaps: the key's spend per UTC day and month and its caps
	// (caps.go), an extension.
	SpendingCaps *spendingCaps `json:"spendingCaps,omitempty"`
}

type creditsLimits struct {
	RequestsPerMinute     limitWindow  `json:"requestsPerMinute"`
	RequestsPerDay        limitWindow  `json:"requestsPerDay"`
	StartsPerMinute       *limitWindow `json:"startsPerMinute,omitempty"`
	ConcurrentGenerations limitWindow  `json:"concurrentGenerations"`
}

// limitWindow is one limit and what is left of it; Reset is absent for
// the concurrent generations, which no window bounds.
type limitWindow struct {
	Limit     int    `json:"limit"`
	Remaining int    `json:"remaining"`
	Reset     string `json:"reset,omitempty"`
}

type ledgerEntry struct {
	Kind    string `json:"kind"`
	Amount  int64  `json:"amount"`
	Balance int64  `json:"balance"`
	TaskID  string `json:"taskId,omitempty"`
	Note    string `json:"note,omitempty"`
	At      string `json:"at"`
}

type ledgerPagination struct {
	Limit      int    `json:"limit"`
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
}

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
	window := func(w service.Window) limitWindow {
		return limitWindow{Limit: w.Limit, Remaining: w.Remaining, Reset: formatTime(w.Reset)}
	}
	resp := creditsResponse{
		Success:  true,
		Balance:  cr.Balance,
		Held:     cr.Held,
		InFlight: cr.InFlight,
		Tier:     cr.Tier,
		Limits: creditsLimits{
			RequestsPerMinute: window(cr.Requests),
			RequestsPerDay:    window(cr.Day),
			ConcurrentGenerations: limitWindow{Limit: cr.InFlightLimit,
				Remaining: max(cr.InFlightLimit-cr.InFlight, 0)},
		},
		Ledger:     make([]ledgerEntry, 0, len(cr.Ledger)),
		Pagination: ledgerPagination{Limit: limit, HasMore: cr.Next > 0},
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
		resp.Ledger = append(resp.Ledger, ledgerEntry{Kind: e.Kind, Amount: e.Amount, Balance: e.Balance,
			TaskID: e.TaskID, Note: e.Note, At: formatTime(e.At)})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
