package endpoint

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
)

func newStack(t *testing.T, env awsstack.Env) *awsstack.Deployment {
	t.Helper()
	s, err := awsstack.New(env, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An endpoint's S3 media, or its links, refuse to start without the
// variables they need, naming every missing one.
func TestMediaNamesMissingVariables(t *testing.T) {
	s := newStack(t, awsstack.Env{TablePrefix: "gen-"})
	_, mediaErr := Media(s)
	_, linksErr := Links(s)
	for what, err := range map[string]error{"Media": mediaErr, "Links": linksErr} {
		for _, name := range []string{awsstack.EnvBucket, awsstack.EnvSignerSecretARN} {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s without configuration = %v, want an error naming %s", what, err, name)
			}
		}
	}
}

// Config leaves Blobs and Uploads nil, not a nil *s3blob.Store inside
// the interfaces, for a function that keeps no object.
func TestConfigWithoutMedia(t *testing.T) {
	cfg := Config(newStack(t, awsstack.Env{TablePrefix: "gen-"}), nil, nil)
	if cfg.Blobs != nil || cfg.Uploads != nil || cfg.Executions != nil || cfg.Store == nil {
		t.Errorf("Config(nil, nil) = %+v, want the store and no blobs, uploads or executions", cfg)
	}
}

// Images bounds each of a start's frames to its share of the request's
// limit, and says why in the 413.
func TestImages(t *testing.T) {
	s := newStack(t, awsstack.Env{TablePrefix: "gen-", MaxImageBytes: 4 << 20})
	if got := Images(s, 2); got.MaxImageBytes != 2<<20 || !strings.Contains(got.ImageLimitMessage, "4 MiB") {
		t.Errorf("Images(2) = %+v, want 2 MiB per frame, the message naming 4 MiB", got)
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

// windows is a windowReader over fixed counts.
type windows map[string]int

func (w windows) Count(_ context.Context, c domain.Window, _ time.Time) (int, error) {
	return w[c.Key], nil
}

// TestReadOnlyLimiter: the status and download functions take nothing
// and refuse nothing; they report the minute window as it stands, even
// when it is full.
func TestReadOnlyLimiter(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cs := ratelimit.RequestCounters("key_1", store.KeyLimits{RequestsPerMinute: 60, RequestsPerDay: 1000}, at)
	r := readOnlyLimiter{windows: windows{cs[0].Key: 60, cs[1].Key: 999}}
	used, err := r.Take(context.Background(), cs, at)
	if err != nil || len(used) != 2 || used[0] != 60 || used[1] != 0 {
		t.Errorf("Take = %v, %v; want [60 0] and no error", used, err)
	}
}
