package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
)

// CodeSpendingCap: a start that would take its key past a spending cap
// (402; an extension).
const CodeSpendingCap = "SPENDING_CAP_EXCEEDED"

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
	return &Error{Status: http.StatusPaymentRequired, Code: CodeSpendingCap,
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

// spendingCaps is the credits endpoint's extension field: per cap, the
// limit in force (absent without one), what the key spent and has left,
// when it resets, and the caps the operator and the holder set.
type spendingCaps struct {
	Day   spendWindow `json:"day"`
	Month spendWindow `json:"month"`
}

type spendWindow struct {
	// Limit is the cap in force; absent when there is none.
	Limit     *int64 `json:"limit,omitempty"`
	Spent     int64  `json:"spent"`
	Remaining *int64 `json:"remaining,omitempty"`
	Reset     string `json:"reset"`
	// OperatorLimit and HolderLimit are the two caps it is the lower
	// of; absent when unset.
	OperatorLimit *int64 `json:"operatorLimit,omitempty"`
	HolderLimit   *int64 `json:"holderLimit,omitempty"`
}

func positive(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
}

// spending reads the caller's spending caps for the credits endpoint.
func (a *API) spending(r *http.Request, c *service.Caller, caps store.SpendCaps) (*spendingCaps, error) {
	als, err := a.svc.Allowances(r.Context(), *c)
	if err != nil {
		return nil, err
	}
	out := &spendingCaps{}
	for _, al := range als {
		sw := spendWindow{Spent: al.Spent, Reset: formatTime(al.Reset)}
		if al.Limit > 0 {
			sw.Limit, sw.Remaining = positive(al.Limit), new(al.Remaining)
		}
		if al.Cap == domain.CapMonth {
			sw.OperatorLimit, sw.HolderLimit = positive(caps.MaxPerMonth), positive(caps.HolderPerMonth)
			out.Month = sw
		} else {
			sw.OperatorLimit, sw.HolderLimit = positive(caps.MaxPerDay), positive(caps.HolderPerDay)
			out.Day = sw
		}
	}
	return out, nil
}

// capsRequest is the body of PATCH /api/gen/credits: the key holder's
// own caps, in credits. An absent field leaves that cap as it is; 0
// removes the holder's own, leaving the operator's. null is refused, as
// the schema (integer, minimum 0) says: it would mean one of those two,
// and a client cannot know which.
type capsRequest struct {
	MaxCreditsPerDay   *int64 `json:"maxCreditsPerDay"`
	MaxCreditsPerMonth *int64 `json:"maxCreditsPerMonth"`
}

// maxCapsBody bounds the body of PATCH /api/gen/credits.
const maxCapsBody = 1 << 10

// setCaps lets the key's holder lower its spending caps (never above the
// operator's: the lower is in force) and answers the credits endpoint's
// body with them.
func (a *API) setCaps(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	var req capsRequest
	if err := decodeObject(w, r, maxCapsBody, &req,
		`The body must be a JSON object such as {"maxCreditsPerDay": 500, "maxCreditsPerMonth": 5000}.`); err != nil {
		return err
	}
	for name, v := range map[string]*int64{"maxCreditsPerDay": req.MaxCreditsPerDay, "maxCreditsPerMonth": req.MaxCreditsPerMonth} {
		if v != nil && *v < 0 {
			return &Error{Status: http.StatusBadRequest, Code: CodeValidation, Field: name, Value: *v,
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
