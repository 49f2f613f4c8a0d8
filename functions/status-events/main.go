// Command status-events is the Lambda of GET /api/gen/status/{taskId}/events: a task's status as Server-Sent Events.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3's
// download links (signed without S3's client), the service on them, and
// the one route it serves. Its API Gateway integration streams the
// response (responseTransferMode STREAM, Lambda's
// InvokeWithResponseStream; template.yaml), so the stream is the local
// server's: each event is sent as it happens, heartbeats between, closed
// after the terminal event or after the stream's bound, below API
// Gateway's 15 minutes, when the client reconnects with Last-Event-ID
// (infra/docs/contract.md, "Live events").
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
	lambda.Start(endpoint.Stream(svc, httpapi.Config{}, httpapi.StatusEvents))
}
