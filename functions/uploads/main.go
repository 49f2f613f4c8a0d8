// Command uploads is the Lambda of POST /api/gen/uploads: it signs an S3
// presigned POST for one image of up to 20 MiB, which the client uploads
// straight to the bucket, since API Gateway and Lambda pass at most about
// 4 MiB of images in a request. The start endpoints then take the
// upload's id (httpapi.Uploads).
// main assembles it (shared/awsstack/endpoint): the DynamoDB store, S3,
// the service on them, and the one route it serves.
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
	svc := service.New(endpoint.Config(s, blobs, nil)) // it starts nothing
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.Uploads))
}
