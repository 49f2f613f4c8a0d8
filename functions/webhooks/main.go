// Command webhooks is the Lambda of POST /api/gen/webhooks and GET /api/gen/webhooks: add a webhook endpoint (its secret shown once), list them.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter (endpoint.MustProxy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(endpoint.MustProxy(httpapi.EndpointWebhooks))
}
