package wire

// HistoryItem is one task of GET /api/gen/history.
type HistoryItem struct {
	TaskID string `json:"taskId"`
	Type   string `json:"type"`
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Status Status `json:"status"`
	// CreditsCost is what the task was charged.
	CreditsCost    int  `json:"creditsCost"`
	CreatedAt      Time `json:"createdAt"`
	CompletedAt    Time `json:"completedAt,omitzero"`
	ProcessingTime *int `json:"processingTime,omitempty"`
	VideoCount     int  `json:"videoCount"`
	// APIKey is the name label of the key that started the task, never
	// the key.
	APIKey          string   `json:"apiKey"`
	HasImage        bool     `json:"hasImage"`
	Error           *Failure `json:"error,omitempty"`
	CreditsRefunded *int     `json:"creditsRefunded,omitempty"`
	// Route and ProviderModel: as on Task.
	Route         string `json:"route,omitempty"`
	ProviderModel string `json:"providerModel,omitempty"`
}

// Refunded is CreditsRefunded, 0 when absent.
func (h *HistoryItem) Refunded() int { return deref(h.CreditsRefunded) }

// HistoryPage is the 200 of GET /api/gen/history: one page of tasks,
// newest first. Its pagination's fields are HistoryPage's own in Go
// (page.Pagination.HasMore), under "pagination" in JSON.
type HistoryPage struct {
	Success    bool          `json:"success"`
	Items      []HistoryItem `json:"videos"`
	Pagination Pagination    `json:"pagination"`
}

// Pagination is where a history page stands.
type Pagination struct {
	// Total counts every task that matches the query.
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Skip    int  `json:"skip"`
	HasMore bool `json:"hasMore"`
	// NextCursor, sent back as the cursor parameter, gets the next page
	// at the cost of the first, however deep; absent on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
}
