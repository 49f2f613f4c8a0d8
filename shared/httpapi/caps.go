package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/wire"
)

// The headers of a start by a key with a spending cap in force: per cap
// (Day, Month), its limit, what is left after the start and when it
// resets (RFC 3339, UTC). A key without caps gets none.
const (
	headerSpendLimit     = "X-Spend-Limit-"
	headerSpendRemaining = "X-Spend-Remaining-"
	headerSpendReset     = "X-Spend-Reset-"
)

// capName is the header suffix of a cap.
func capName(k domain.WindowKind) string {
	if k == domain.CapMonth {
		return "Month"
	}
	return "Day"
}

// spendingCapError is the 402 of a start refused by a cap: details name
// the cap, its limit, what is left and when it resets.
func spendingCapError(e *domain.SpendingCapError) *Error {
	reset := formatTime(e.Window.ExpiresAt)
	return &Error{Status: http.StatusPaymentRequired, Code: wire.CodeSpendingCap,
		Message: fmt.Sprintf("This generation costs %d credits; this key's %s spending cap of %d credits has %d left. "+
			"Nothing was charged; the cap resets at %s.", e.Required, daily(e.Window.Kind), e.Window.Limit, e.Left(), reset),
		Details: map[string]any{"cap": string(e.Window.Kind), "limit": e.Window.Limit, "remaining": e.Left(),
			"creditsRequired": e.Required, "resetsAt": reset}}
}

func daily(k domain.WindowKind) string {
	if k == domain.CapMonth {
		return "monthly"
	}
	return "daily"
}

// spendHeaders sets the spending-cap headers of a start, from what its
// transaction left (service.Started.Spend): nothing is read again.
func spendHeaders(w http.ResponseWriter, spend []service.Allowance) {
	h := w.Header()
	for _, al := range spend {
		if al.Limit == 0 {
			continue
		}
		n := capName(al.Cap)
		h.Set(headerSpendLimit+n, strconv.FormatInt(al.Limit, 10))
		h.Set(headerSpendRemaining+n, strconv.FormatInt(al.Remaining, 10))
		h.Set(headerSpendReset+n, formatTime(al.Reset))
	}
}

// spending reads the caller's spending caps for the credits endpoint.
func (a *API) spending(r *http.Request, c *service.Caller, caps store.SpendCaps) (*wire.SpendingCaps, error) {
	als, err := a.svc.Allowances(r.Context(), *c)
	if err != nil {
		return nil, err
	}
	out := &wire.SpendingCaps{}
	for _, al := range als {
		sw := wire.SpendWindow{Spent: al.Spent, Reset: wire.TimeOf(al.Reset)}
		if al.Limit > 0 {
			sw.Limit, sw.Remaining = al.Limit, new(al.Remaining)
		}
		if al.Cap == domain.CapMonth {
			sw.OperatorLimit, sw.HolderLimit = max(caps.MaxPerMonth, 0), max(caps.HolderPerMonth, 0)
			out.Month = sw
		} else {
			sw.OperatorLimit, sw.HolderLimit = max(caps.MaxPerDay, 0), max(caps.HolderPerDay, 0)
			out.Day = sw
		}
	}
	return out, nil
}

// maxCapsBody bounds the body of PATCH /api/gen/credits.
const maxCapsBody = 1 << 10

// setCaps lets the key's holder lower its spending caps (never above the
// operator's: the lower is in force) and answers the credits endpoint's
// body with them.
func (a *API) setCaps(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	var req wire.CapsUpdate
	if err := decodeObject(w, r, maxCapsBody, &req,
		`The body must be a JSON object such as {"maxCreditsPerDay": 500, "maxCreditsPerMonth": 5000}.`); err != nil {
		return err
	}
	for name, v := range map[string]*int64{"maxCreditsPerDay": req.MaxCreditsPerDay, "maxCreditsPerMonth": req.MaxCreditsPerMonth} {
		if v != nil && *v < 0 {
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: name, Value: *v,
				Message: name + " must be 0 (no cap of your own) or a positive number of credits."}
		}
	}
	caps, err := a.svc.SetHolderCaps(r.Context(), *c, service.HolderCaps{PerDay: req.MaxCreditsPerDay, PerMonth: req.MaxCreditsPerMonth})
	if err != nil {
		return err
	}
	c.Key.Caps = caps
	return a.credits(w, r, c)
}
