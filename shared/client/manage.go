package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/genvideo/gen/shared/wire"
)

// Codes of cancel and delete (extensions of the contract).
const (
	// CodeTaskNotCancellable: Cancel of a task that is finished.
	CodeTaskNotCancellable = wire.CodeTaskNotCancellable
	// CodeTaskNotFinished: Delete of a task pending or processing.
	CodeTaskNotFinished = wire.CodeTaskNotFinished
	// CodeTaskDeleted: a start replayed under the Idempotency-Key of a
	// task deleted since; nothing was charged.
	CodeTaskDeleted = wire.CodeTaskDeleted
)

// Cancel ends a pending or processing task: it fails with error code
// "CANCELLED" and its credits are refunded. Cancelling a task already
// cancelled answers it again, so a Cancel is safe to retry. A finished
// task is an *Error with Code CodeTaskNotCancellable.
func (c *Client) Cancel(ctx context.Context, taskID string) (*Task, error) {
	_, body, err := c.do(ctx, call{method: http.MethodPost, path: "/api/gen/cancel/" + url.PathEscape(taskID), retry: true})
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("gen: cancel %s: decode answer: %w", taskID, err)
	}
	return &t, nil
}

// Delete removes a finished task, its videos and its uploaded images;
// download links already handed out stop working. A task pending or
// processing is an *Error with Code CodeTaskNotFinished (Cancel it
// first). A retry after a lost answer may find the task gone already:
// an *Error with Code CodeTaskNotFound.
func (c *Client) Delete(ctx context.Context, taskID string) error {
	_, _, err := c.do(ctx, call{method: http.MethodDelete, path: "/api/gen/tasks/" + url.PathEscape(taskID), retry: true})
	return err
}

// CreditsQuery selects a page of the ledger.
type CreditsQuery struct {
	// Limit is the page size (1-100; 0: the service's default, 20).
	Limit int
	// Cursor is a previous page's NextCursor.
	Cursor string
}

// Credits is the account's credits and the key's limits, and one page
// of the ledger; its pagination's fields (HasMore, NextCursor) are its
// own.
type Credits = wire.Credits

// CreditLimits are the key's limits and what is left of each.
type CreditLimits = wire.CreditLimits

// SpendingCaps is what the key spent (charged less refunded) per UTC day
// and month, and its caps.
type SpendingCaps = wire.SpendingCaps

// SpendWindow is one cap: Limit is the cap in force (0: none), the
// lower of OperatorLimit and HolderLimit (each 0 when unset); Remaining
// what it still allows (nil without a cap); Reset when it starts again.
type SpendWindow = wire.SpendWindow

// CapsUpdate is the key holder's own spending caps, in credits: nil
// leaves one as it is, 0 removes the holder's own. The operator's cap
// stays in force when it is lower.
type CapsUpdate = wire.CapsUpdate

// SetSpendingCaps sets the calling key's own spending caps (PATCH
// /api/gen/credits) and returns the credits with the caps as they are in
// force after. It is not retried: sending it again is harmless, but the
// caller decides.
func (c *Client) SetSpendingCaps(ctx context.Context, u CapsUpdate) (*Credits, error) {
	body, err := jsonBody(u)
	if err != nil {
		return nil, fmt.Errorf("gen: PATCH /api/gen/credits: %w", err)
	}
	_, b, err := c.do(ctx, call{method: http.MethodPatch, path: "/api/gen/credits", body: body})
	if err != nil {
		return nil, err
	}
	var cr Credits
	if err := json.Unmarshal(b, &cr); err != nil {
		return nil, fmt.Errorf("gen: PATCH /api/gen/credits: decode answer: %w", err)
	}
	return &cr, nil
}

// LimitWindow is a limit and what is left of it until Reset (zero for
// the concurrent generations, which no window bounds).
type LimitWindow = wire.LimitWindow

// LedgerEntry is one movement of credits: a grant, a charge (negative)
// or a refund, with the balance after it.
type LedgerEntry = wire.LedgerEntry

// Credits returns the balance, the credits held, the key's tier and
// limits (this request counted), and one page of the ledger.
func (c *Client) Credits(ctx context.Context, q CreditsQuery) (*Credits, error) {
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var cr Credits
	if _, err := c.getJSON(ctx, "/api/gen/credits", v, &cr); err != nil {
		return nil, err
	}
	return &cr, nil
}

// AllLedger yields every ledger entry from q.Cursor on, newest first,
// following each page's NextCursor (pages of q.Limit, default 100). An
// error is yielded once, and ends the sequence.
func (c *Client) AllLedger(ctx context.Context, q CreditsQuery) iter.Seq2[LedgerEntry, error] {
	if q.Limit == 0 {
		q.Limit = 100
	}
	return allPages(q.Cursor, func(cursor string) ([]LedgerEntry, string, error) {
		q.Cursor = cursor
		page, err := c.Credits(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return page.Ledger, page.Pagination.NextCursor, nil
	})
}

// allPages yields every item of the pages fetch answers, from cursor on,
// following each page's next cursor until a page has none (or no items).
// An error is yielded once, and ends the sequence.
func allPages[T any](cursor string, fetch func(cursor string) (items []T, next string, err error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" || len(items) == 0 {
				return
			}
			cursor = next
		}
	}
}
