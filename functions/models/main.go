// Command models is the Lambda of GET /api/gen/models: the models and their prices.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter (awsstack.MustProxy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(awsstack.MustProxy(httpapi.EndpointModels))
}
