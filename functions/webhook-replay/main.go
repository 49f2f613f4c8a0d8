// Command webhook-replay is the Lambda of POST /api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay: send a delivery again.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, the
// service on it, and the one route it serves.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustDeployment()
	svc := service.New(endpoint.Config(s, nil, nil)) // it keeps no object and starts nothing
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.WebhookReplay))
}
