package wire

// Credits is the 200 of GET and PATCH /api/gen/credits: the account's
// credits, the key's limits (this request counted) and one page of the
// ledger. Its pagination's fields are Credits' own in Go (cr.NextCursor),
// under "pagination" in JSON.
type Credits struct {
	Success bool `json:"success"`
	// Balance is what starts can spend.
	Balance int64 `json:"balance"`
	// Held is what generations pending or processing were charged:
	// refunded if they fail.
	Held     int64        `json:"held"`
	InFlight int          `json:"inFlight"`
	Tier     string       `json:"tier"`
	Limits   CreditLimits `json:"limits"`
	// Ledger is one page of the account's movements of credits, newest
	// first.
	Ledger     []LedgerEntry    `json:"ledger"`
	Pagination LedgerPagination `json:"pagination"`
	// SpendingCaps (an extension) is the key's spend this UTC day and
	// month and its caps; nil from a service without them.
	SpendingCaps *SpendingCaps `json:"spendingCaps,omitempty"`
}

// CreditLimits are the key's limits and what is left of each.
type CreditLimits struct {
	RequestsPerMinute LimitWindow `json:"requestsPerMinute"`
	RequestsPerDay    LimitWindow `json:"requestsPerDay"`
	// StartsPerMinute is nil when the key has no such limit.
	StartsPerMinute       *LimitWindow `json:"startsPerMinute,omitempty"`
	ConcurrentGenerations LimitWindow  `json:"concurrentGenerations"`
}

// LimitWindow is a limit and what is left of it until Reset; Reset is
// zero (absent) for the concurrent generations, which no window bounds.
type LimitWindow struct {
	Limit     int  `json:"limit"`
	Remaining int  `json:"remaining"`
	Reset     Time `json:"reset,omitzero"`
}

// LedgerEntry is one movement of credits: a grant, a charge (negative)
// or a refund, with the balance after it.
type LedgerEntry struct {
	Kind    string `json:"kind"`
	Amount  int64  `json:"amount"`
	Balance int64  `json:"balance"`
	TaskID  string `json:"taskId,omitempty"`
	Note    string `json:"note,omitempty"`
	At      Time   `json:"at"`
}

// LedgerPagination is where a ledger page stands.
type LedgerPagination struct {
	Limit   int  `json:"limit"`
	HasMore bool `json:"hasMore"`
	// NextCursor, sent back as the cursor parameter, gets the next
	// page; absent on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// SpendingCaps is what the key spent (charged less refunded) per UTC day
// and month, and its caps.
type SpendingCaps struct {
	Day   SpendWindow `json:"day"`
	Month SpendWindow `json:"month"`
}

// SpendWindow is one cap: Limit is the cap in force (0, absent: none),
// the lower of OperatorLimit and HolderLimit (each 0, absent, when
// unset); Remaining what it still allows (nil without a cap); Reset when
// the window starts again.
type SpendWindow struct {
	Limit         int64  `json:"limit,omitempty"`
	Spent         int64  `json:"spent"`
	Remaining     *int64 `json:"remaining,omitempty"`
	Reset         Time   `json:"reset"`
	OperatorLimit int64  `json:"operatorLimit,omitempty"`
	HolderLimit   int64  `json:"holderLimit,omitempty"`
}

// CapsUpdate is the body of PATCH /api/gen/credits: the key holder's own
// spending caps, in credits. An absent field leaves that cap as it is; 0
// removes the holder's own, leaving the operator's, which stays in force
// when it is lower. null is refused: it would mean one of those two.
type CapsUpdate struct {
	MaxCreditsPerDay   *int64 `json:"maxCreditsPerDay,omitempty"`
	MaxCreditsPerMonth *int64 `json:"maxCreditsPerMonth,omitempty"`
}
