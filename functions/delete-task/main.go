// Command delete-task is the Lambda of DELETE /api/gen/tasks/{taskId}: delete a finished task, its videos and images.
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
	lambda.Start(endpoint.Proxy(svc, httpapi.Config{}, httpapi.DeleteTask))
}
