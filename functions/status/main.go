// Command status is the Lambda of GET /api/gen/status/{taskId}: a task's status, with signed download URLs once completed.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/httpapi"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	h, err := stack.Endpoint(httpapi.EndpointStatus)
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
