// Command status-events is the Lambda of GET /api/gen/status/{taskId}/events: a task's status as Server-Sent Events.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3's
// download links (signed without S3's client), the service on them, and
// the one route it serves. Behind API Gateway's buffered proxy
// integration a response reaches the client whole, so the stream answers
// as a long poll (httpapi.Config.EventsBuffered): each response ends after
// its first events, or after a heartbeat, and the client's EventSource
// reconnects with Last-Event-ID (README "Live events").
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustDeployment()
	cfg := endpoint.Config(s, nil, nil) // it keeps no object and starts nothing
	cfg.Links = endpoint.Must(endpoint.Links(s))
	svc := service.New(cfg)
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{EventsBuffered: true}, httpapi.StatusEvents))
}
