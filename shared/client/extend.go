package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/genvideo/gen/shared/wire"
)

// ExtendRequest is what Extend sends (an extension of the contract): a
// prompt and the parameters of a start that an extension takes. Its
// model, aspect ratio and sample count are the extended task's.
type ExtendRequest = wire.ExtendRequest

// Extend continues the video of the caller's completed task taskID by
// about 7 seconds (an extension of the contract), as a new task of type
// "video-extension", charged, refunded and waited for as any start. Only
// a video a Veo backend made can be extended, on the route that made it:
// GET /api/gen/models says what each backend takes (mode
// video-extension). Another account's task is an *Error
// CodeTaskNotFound; a failed, unfinished, deleted or unextendable task a
// CodeValidation naming "taskId"; nothing is charged then.
func (c *Client) Extend(ctx context.Context, taskID string, req ExtendRequest, opts ...StartOption) (*Started, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, fmt.Errorf("gen: encode request: %w", err)
	}
	return c.start(ctx, call{method: http.MethodPost, path: "/api/gen/extend/" + url.PathEscape(taskID), body: body}, opts)
}

// QuoteExtend quotes Extend of taskID with req: it is validated exactly
// as the extension would be (a refusal is the extension's *Error).
func (c *Client) QuoteExtend(ctx context.Context, taskID string, req ExtendRequest) (*Quote, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, fmt.Errorf("gen: encode request: %w", err)
	}
	return c.quote(ctx, call{method: http.MethodPost, path: "/api/gen/quote/extend", query: url.Values{"taskId": {taskID}}, body: body})
}
