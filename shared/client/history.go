package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"
)

// History returns one page of the account's tasks, newest first.
func (c *Client) History(ctx context.Context, q HistoryQuery) (*HistoryPage, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", string(q.Status))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Skip != 0 {
		v.Set("skip", strconv.Itoa(q.Skip))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var page HistoryPage
	if _, err := c.getJSON(ctx, "/api/gen/history", v, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// AllHistory yields every task matching q from q.Skip on, newest first,
// fetching page after page (of q.Limit tasks, default 100) by following
// each page's NextCursor, so that every page costs the server what the
// first does and a task started meanwhile shifts nothing. (From a server
// that sends no cursor it pages by skip: a task started while it pages
// then shifts the pages by one.) A task already yielded is not yielded
// again. An error is yielded once, and ends the sequence.
//
//	for item, err := range c.AllHistory(ctx, client.HistoryQuery{Status: client.StatusCompleted}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(item.TaskID)
//	}
func (c *Client) AllHistory(ctx context.Context, q HistoryQuery) iter.Seq2[HistoryItem, error] {
	return func(yield func(HistoryItem, error) bool) {
		if q.Limit == 0 {
			q.Limit = 100
		}
		seen := map[string]bool{}
		for {
			page, err := c.History(ctx, q)
			if err != nil {
				yield(HistoryItem{}, err)
				return
			}
			for _, it := range page.Items {
				if seen[it.TaskID] {
					continue
				}
				seen[it.TaskID] = true
				if !yield(it, nil) {
					return
				}
			}
			if !page.Pagination.HasMore || len(page.Items) == 0 {
				return
			}
			if page.Pagination.NextCursor != "" {
				q.Cursor, q.Skip = page.Pagination.NextCursor, 0
			} else {
				q.Skip += len(page.Items)
			}
		}
	}
}
