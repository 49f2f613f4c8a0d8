// Command text-to-video is the Lambda of POST /api/gen/text-to-video: starts a generation from a prompt, with up to three reference images (as direct uploads, or files of a multipart body).
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3,
// Step Functions, the image intake, the service on them, and the one route it serves.
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
	cfg := endpoint.Config(s, blobs, flows)
	cfg.Images = intake.New(blobs, 0) // its reference images are checked as the image starts' are
	svc := service.New(endpoint.Offers(s, cfg))
	// Up to three reference images share the request's room.
	lambda.Start(endpoint.Proxy(svc, endpoint.Images(s, 3), httpapi.TextToVideo))
}
