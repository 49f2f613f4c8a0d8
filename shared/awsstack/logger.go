package awsstack

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// NewLogger returns the Lambdas' logger: JSON lines at level and above,
// with Lambda's field names (timestamp, level, message) and the request id
// of the invocation whose context a record is logged with, which is what
// CloudWatch expects of a function whose LoggingConfig is JSON.
// (lambdacontext.NewLogHandler does the same but takes its level only
// from AWS_LAMBDA_LOG_LEVEL.)
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: lambdacontext.ReplaceAttr})
	return slog.New(requestIDHandler{h})
}

// requestIDHandler adds requestId to the records logged with a Lambda
// invocation's context.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		r.AddAttrs(slog.String("requestId", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
