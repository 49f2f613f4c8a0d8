package endpoint

import (
	"context"
	"time"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
)

// windowReader reads a counter's window; dynamostore.Store is one.
type windowReader interface {
	Count(ctx context.Context, c domain.Window, at time.Time) (int, error)
}

// GatewayLimited counts the requests of status and download, which
// write nothing for rate limits: clients call them most (a generation is
// polled about 8 times for one start), and API Gateway's usage plan
// already holds every key to its rate and daily quota before a function
// runs (infra/docs/deploy.md, "How customer keys reach the usage plans").
// Each of their requests then makes no DynamoDB write at all
// (infra/docs/performance.md).
func GatewayLimited(s *awsstack.Deployment) service.Limiter { return readOnlyLimiter{windows: s.Store} }

// readOnlyLimiter is service.Limiter for a gateway-limited endpoint: it
// takes nothing and refuses nothing, and reports the minute window as the
// other endpoints left it, so that the X-RateLimit headers still describe
// the key's minute (without this request in it).
type readOnlyLimiter struct{ windows windowReader }

// Take reads the minute window of counters; the others count as 0.
func (r readOnlyLimiter) Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error) {
	used := make([]int, len(counters))
	for i, c := range counters {
		if c.Kind != ratelimit.Minute {
			continue
		}
		n, err := r.windows.Count(ctx, c, at)
		if err != nil {
			return nil, err
		}
		used[i] = n
	}
	return used, nil
}
