// Command openai-content is the Lambda of GET /openai/v1/videos/{taskId}/content: OpenAI's videos.downloadContent, a redirect to the video's signed link.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3's
// download links (signed without S3's client), the service on them, and
// the one route it serves.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustDeployment()
	cfg := endpoint.Config(s, nil, nil) // it keeps no object and starts nothing
	cfg.Links = endpoint.Must(endpoint.Links(s))
	cfg.Limiter = endpoint.GatewayLimited(s)
	svc := service.New(cfg)
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.OpenAIContent))
}
