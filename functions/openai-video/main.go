// Command openai-video is the Lambda of GET and DELETE /openai/v1/videos/{taskId}: OpenAI's videos.retrieve and videos.delete.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3
// (a delete removes the video's objects), the service on them, and the
// one route it serves.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustDeployment()
	blobs := endpoint.Must(endpoint.Media(s))
	cfg := endpoint.Config(s, blobs, nil) // it starts nothing
	// Retrieve is what clients poll: counted by the usage plan, as status.
	cfg.Limiter = endpoint.GatewayLimited(s)
	svc := service.New(cfg)
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.OpenAIVideo))
}
