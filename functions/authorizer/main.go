// Command authorizer is the API Gateway REQUEST authorizer of the API: it
// allows requests whose X-API-Key is a live key and names the key's usage
// plan API key (see shared/authorizer).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/awsstack"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(authorizer.New(stack.Store, stack.Logger).Authorize)
}
