// Command text-to-video is the Lambda of POST /api/gen/text-to-video: starts a generation from a prompt.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3,
// Step Functions, the service on them, and the one route it serves.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/awsstack/executions"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustProviderDeployment()
	blobs := endpoint.Must(endpoint.Media(s))
	flows := endpoint.Must(executions.New(s))
	svc := service.New(endpoint.Offers(s, endpoint.Config(s, blobs, flows)))
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.TextToVideo))
}
