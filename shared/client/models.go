package client

import "context"

// Models returns the models the service offers, one entry per model id,
// and the default model.
func (c *Client) Models(ctx context.Context) (*ModelList, error) {
	var l ModelList
	if _, err := c.getJSON(ctx, "/api/gen/models", nil, &l); err != nil {
		return nil, err
	}
	l.Models = merge(l.Models)
	return &l, nil
}
