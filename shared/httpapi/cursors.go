package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/genvideo/gen/shared/cursor"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/wire"
)

// The lists whose cursors are sealed (shared/cursor): a cursor opens only
// for the list and the account it was issued for, so that a history
// cursor sent to the ledger, or one account's to another, is a 400 like
// any made-up one.
const (
	listHistory = "history"
	listLedger  = "ledger"
)

// listDeliveries is the list of one webhook's delivery attempts.
func listDeliveries(webhookID string) string { return "deliveries/" + webhookID }

// sealCursor is the cursor of position pos in list for the caller.
func (a *API) sealCursor(ctx context.Context, list string, c *service.Caller, pos string) (string, error) {
	s, err := a.cursors.Seal(ctx, list, c.Key.AccountID, []byte(pos))
	if err != nil {
		return "", cursorKeysUnavailable(err)
	}
	return s, nil
}

// openCursor reads the query's cursor of list for the caller: ok is
// false without one. A cursor that is repeated, or that the endpoint did
// not issue to this account (made up, changed by a character, another
// list's or another account's), is a 400 VALIDATION_ERROR on cursor
// saying msg.
func (a *API) openCursor(ctx context.Context, q url.Values, list string, c *service.Caller, msg string) (pos string, ok bool, _ error) {
	vs, ok := q["cursor"]
	if !ok {
		return "", false, nil
	}
	refused := &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "cursor", Value: vs[0], Message: msg}
	if len(vs) > 1 {
		return "", false, refused
	}
	p, err := a.cursors.Open(ctx, list, c.Key.AccountID, vs[0])
	switch {
	case errors.Is(err, cursor.ErrInvalid):
		return "", false, refused
	case err != nil:
		return "", false, cursorKeysUnavailable(err)
	}
	return string(p), true, nil
}

// cursorKeysUnavailable is the 503 of keys that could not be read (the
// signer secret on AWS): nothing was changed, a retry may work.
func cursorKeysUnavailable(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable, cause: err,
		Message: "The service is temporarily unavailable. Please retry shortly."}
}
