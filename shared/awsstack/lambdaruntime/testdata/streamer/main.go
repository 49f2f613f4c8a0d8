// Command streamer is a Lambda for the tests of lambdaruntime: it answers
// each event with a stream, as a function behind a streamed integration
// does (events.APIGatewayProxyStreamingResponse), writing "first", then
// waiting for the file the event names before writing "second" (so that
// a test sees the first part before the second exists), or failing after
// "first" when the event asks.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

type event struct {
	Gate string `json:"gate"` // the file to wait for
	Fail bool   `json:"fail"` // fail after the first part
}

func main() {
	lambda.Start(func(ctx context.Context, ev event) (*events.APIGatewayProxyStreamingResponse, error) {
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte("first\n"))
			if ev.Fail {
				pw.CloseWithError(errors.New("failed after the first part"))
				return
			}
			for {
				if _, err := os.Stat(ev.Gate); err == nil || ctx.Err() != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			pw.Write([]byte("second\n"))
			pw.Close()
		}()
		return &events.APIGatewayProxyStreamingResponse{StatusCode: 200, Body: pr}, nil
	})
}
