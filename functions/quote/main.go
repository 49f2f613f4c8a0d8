// Command quote is the Lambda of POST /api/gen/quote/{endpoint}: what a start would charge, without starting it.
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3
// and the image intake (an image quote checks its images as the start
// does, then deletes them), the service on them, and the one route it
// serves. It starts no workflow.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/intake"
	"github.com/genvideo/gen/shared/service"
)

func main() {
	s := endpoint.MustProviderDeployment()
	blobs := endpoint.Must(endpoint.Media(s))
	cfg := endpoint.Offers(s, endpoint.Config(s, blobs, nil)) // it starts nothing
	cfg.Images = intake.New(blobs, 0)
	svc := service.New(cfg)
	// The image limit of image-to-video, whose one image may take the
	// whole request; a first-last-frame quote is bounded by API Gateway's
	// request size as its start is.
	lambda.Start(endpoint.Proxy(svc, endpoint.Images(s, 1), httpapi.Quote))
}
