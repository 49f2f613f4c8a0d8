// Command first-last-frame is the Lambda of POST /api/gen/first-last-frame: starts a generation between two uploaded frames (a base64-encoded multipart body).
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
	cfg := endpoint.Offers(s, endpoint.Config(s, blobs, flows))
	cfg.Images = intake.New(blobs, 0) // it alone, with image-to-video, checks images
	svc := service.New(cfg)
	lambda.Start(endpoint.Proxy(svc, endpoint.Images(s, 2), httpapi.FirstLastFrame))
}
