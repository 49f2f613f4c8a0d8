// Command webhook-delete is the Lambda of DELETE /api/gen/webhooks/{webhookId}: remove a webhook endpoint.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter (endpoint.MustProxy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(endpoint.MustProxy(httpapi.EndpointWebhooksDelete))
}
