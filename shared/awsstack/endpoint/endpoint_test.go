package endpoint

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/httpapi"
)

func newStack(t *testing.T, env awsstack.Env) *awsstack.Stack {
	t.Helper()
	s, err := awsstack.New(env, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An endpoint refuses to start without the variables it needs, naming
// every missing one.
func TestNewNamesMissingVariables(t *testing.T) {
	s := newStack(t, awsstack.Env{TablePrefix: "gen-"})
	_, err := New(s, httpapi.EndpointStatus)
	for _, name := range []string{awsstack.EnvBucket, awsstack.EnvStateMachineARN, awsstack.EnvSignerSecretARN} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Endpoint without configuration = %v, want an error naming %s", err, name)
		}
	}
}

func TestNewNeedsAKnownName(t *testing.T) {
	s := newStack(t, awsstack.Env{TablePrefix: "gen-", Bucket: "media", SignerSecretARN: "arn:aws:secretsmanager:x",
		StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:gen"})
	if _, err := New(s, "upload"); err == nil {
		t.Error(`Endpoint("upload"): no error`)
	}
	if h, err := New(s, httpapi.EndpointModels); err != nil || h == nil {
		t.Errorf("Endpoint(models) = %v, %v", h, err)
	}
}

func TestImageLimitMessage(t *testing.T) {
	msg := imageLimitMessage(4 << 20)
	for _, want := range []string{"4 MiB", "API Gateway", "AWS Lambda", "6 MB", "20 MiB", "first-last-frame"} {
		if !strings.Contains(msg, want) {
			t.Errorf("imageLimitMessage(4 MiB) = %q, lacks %q", msg, want)
		}
	}
	if msg := imageLimitMessage(1000); !strings.Contains(msg, "1000 bytes") {
		t.Errorf("imageLimitMessage(1000) = %q, lacks 1000 bytes", msg)
	}
}

// The handler's context ends Reserve before the Lambda's deadline, so
// that a start that cannot finish fails and is refunded while the Lambda
// still runs.
func TestWithReserve(t *testing.T) {
	lambdaEnd := time.Date(2030, 1, 1, 0, 0, 20, 0, time.UTC)
	var got time.Time
	h := withReserve(func(ctx context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		got, _ = ctx.Deadline()
		return events.APIGatewayProxyResponse{}, nil
	})
	ctx, cancel := context.WithDeadline(context.Background(), lambdaEnd)
	defer cancel()
	if _, err := h(ctx, events.APIGatewayProxyRequest{}); err != nil {
		t.Fatal(err)
	}
	if want := lambdaEnd.Add(-Reserve); !got.Equal(want) {
		t.Errorf("handler deadline %v, want %v (the Lambda's less Reserve)", got, want)
	}
}
