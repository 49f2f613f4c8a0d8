// Command openai-extensions is the Lambda of POST /openai/v1/videos/extensions: OpenAI's videos.extend, the extension of a completed video (issue 37).
// main assembles it as extend's (shared/awsstack/endpoint): the DynamoDB
// store, S3 (the video is copied to the new task's inputs), Step
// Functions, the service on them, and the one route it serves.
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
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.OpenAIExtensions))
}
