// Command openai-videos is the Lambda of POST and GET /openai/v1/videos: OpenAI's videos.create (a prompt, or an image as input_reference) and videos.list.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3,
// Step Functions, the service on them, and the one route it serves.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/awsstack/executions"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/intake"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustProviderDeployment()
	blobs := endpoint.Must(endpoint.Media(s))
	flows := endpoint.Must(executions.New(s))
	cfg := endpoint.Offers(s, endpoint.Config(s, blobs, flows))
	cfg.Images = intake.New(blobs, 0) // input_reference is checked as image-to-video's image
	svc := service.New(cfg)
	lambda.Start(endpoint.Proxy(svc, endpoint.Images(s, 1), httpapi.OpenAIVideos))
}
