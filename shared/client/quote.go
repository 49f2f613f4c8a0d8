package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/genvideo/gen/shared/wire"
)

// CodeMaxCreditsExceeded: a start (or its quote) that costs more than
// its Request.MaxCredits (402; an extension).
const CodeMaxCreditsExceeded = wire.CodeMaxCredits

// Quote is what a start with the same request would do now (an extension
// of the contract): the credits it would charge and whether a limit
// would refuse it. A quote charges nothing, counts no start and creates
// no task; it is a snapshot, which another request may change.
type Quote = wire.Quote

// QuoteRefusal is the refusal a start would get now.
type QuoteRefusal = wire.QuoteRefusal

// QuoteTextToVideo quotes TextToVideo with req: it is validated exactly
// as the start would be (an invalid request is the start's *Error).
func (c *Client) QuoteTextToVideo(ctx context.Context, req Request) (*Quote, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, fmt.Errorf("gen: encode request: %w", err)
	}
	return c.quote(ctx, call{method: http.MethodPost, path: "/api/gen/quote/text-to-video", body: body})
}

// QuoteTextToVideoWithReferences quotes TextToVideoWithReferences with
// req and refs. The quote takes direct uploads alone: each file of refs
// is uploaded first (UploadImage) and named by its id.
func (c *Client) QuoteTextToVideoWithReferences(ctx context.Context, req Request, refs []Image) (*Quote, error) {
	body, _, err := c.referenceBody(ctx, req, refs, false)
	if err != nil {
		return nil, err
	}
	return c.quote(ctx, call{method: http.MethodPost, path: "/api/gen/quote/text-to-video", body: body})
}

// QuoteImageToVideo quotes ImageToVideo with req and image; the image is
// sent and checked as the start would check it, then discarded.
func (c *Client) QuoteImageToVideo(ctx context.Context, req Request, image Image) (*Quote, error) {
	files, ids, err := c.prepareImages(ctx, []filePart{{"image", image}}, c.directAbove)
	if err != nil {
		return nil, err
	}
	return c.quote(ctx, call{method: http.MethodPost, path: "/api/gen/quote/image-to-video", body: multipartBody(req, files, ids)}, imagesOf(files)...)
}

// QuoteFirstLastFrame quotes FirstLastFrame with req and its frames.
func (c *Client) QuoteFirstLastFrame(ctx context.Context, req Request, first, last Image) (*Quote, error) {
	files, ids, err := c.prepareImages(ctx, []filePart{{"firstFrame", first}, {"lastFrame", last}}, c.directAbove/2)
	if err != nil {
		return nil, err
	}
	return c.quote(ctx, call{method: http.MethodPost, path: "/api/gen/quote/first-last-frame", body: multipartBody(req, files, ids)}, imagesOf(files)...)
}

func (c *Client) quote(ctx context.Context, cl call, images ...Image) (*Quote, error) {
	// A quote changes nothing: it may be sent again, unless an image can
	// be read only once.
	cl.retry = true
	for _, im := range images {
		cl.retry = cl.retry && !im.once
	}
	_, body, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	var q Quote
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, fmt.Errorf("gen: POST %s: decode answer: %w", cl.path, err)
	}
	return &q, nil
}
