// Command webhook-deliveries is the Lambda of GET /api/gen/webhooks/{webhookId}/deliveries: an endpoint's delivery attempts, newest first.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter (endpoint.MustProxy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(endpoint.MustProxy(httpapi.EndpointWebhookAttempts))
}
