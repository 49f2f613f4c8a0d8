// Command uploads is the Lambda of POST /api/gen/uploads: it signs an S3
// presigned POST for one image of up to 20 MiB, which the client uploads
// straight to the bucket, since API Gateway and Lambda pass at most about
// 4 MiB of images in a request. The start endpoints then take the
// upload's id (endpoint.MustProxy, httpapi's uploads).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	lambda.Start(endpoint.MustProxy(httpapi.EndpointUploads))
}
