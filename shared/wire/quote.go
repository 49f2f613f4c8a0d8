package wire

// Quote is the 200 of POST /api/gen/quote/{endpoint} (an extension):
// what the start with the same body would charge now and whether it
// would be let through. A quote charges nothing, counts no start and
// creates no task.
type Quote struct {
	Success  bool   `json:"success"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// CreditsRequired is the creditsUsed the start would answer.
	CreditsRequired int `json:"creditsRequired"`
	// Balance is the balance now; BalanceAfter what the start would leave
	// (negative when the balance cannot pay it).
	Balance      int64 `json:"balance"`
	BalanceAfter int64 `json:"balanceAfter"`
	// Allowed: the start would be let through now; otherwise Refusal is
	// the error it would be answered with.
	Allowed bool          `json:"allowed"`
	Refusal *QuoteRefusal `json:"refusal,omitempty"`
}

// QuoteRefusal is the refusal a start would get now.
type QuoteRefusal struct {
	// Status is the HTTP status (402 or 429), Code the error code.
	Status  int    `json:"status"`
	Code    string `json:"error"`
	Message string `json:"message"`
	// RetryAfterSeconds, for a 429, is when the limit may let it through.
	RetryAfterSeconds int `json:"retryAfter,omitempty"`
}
