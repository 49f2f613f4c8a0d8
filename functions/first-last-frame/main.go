// Command first-last-frame is the Lambda of POST /api/gen/first-last-frame: starts a generation between two uploaded frames (a base64-encoded multipart body).
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter (endpoint.MustProxy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(endpoint.MustProxy(httpapi.EndpointFirstLastFrame))
}
