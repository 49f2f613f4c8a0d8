package client

import (
	"context"
	"fmt"
	"net/http"
)

// Models returns the models the service offers, one entry per model id,
// and the default model.
func (c *Client) Models(ctx context.Context) (*ModelList, error) {
	_, body, err := c.do(ctx, call{method: http.MethodGet, path: "/api/gen/models", retry: true})
	if err != nil {
		return nil, err
	}
	l, err := decodeModels(body)
	if err != nil {
		return nil, fmt.Errorf("gen: GET /api/gen/models: decode answer: %w", err)
	}
	return &l, nil
}
