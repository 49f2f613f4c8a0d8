// Command credits is the Lambda of GET /api/gen/credits (the balance, held credits, limits, spending caps and the ledger) and PATCH /api/gen/credits (the key holder's spending caps).
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
	lambda.Start(endpoint.Proxy(svc, endpoint.Cursors(s), httpapi.Credits))
}
