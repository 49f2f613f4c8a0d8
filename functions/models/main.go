// Command models is the Lambda of GET /api/gen/models: the models and their prices.
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
	s := endpoint.MustProviderDeployment()
	svc := service.New(endpoint.Offers(s, endpoint.Config(s, nil, nil))) // it keeps no object and starts nothing
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.Models))
}
