// Command task-expiry takes the tasks DynamoDB's TTL deleted out of their
// accounts' history counters; the tasks table's stream feeds it
// (shared/awsstack/taskexpirylambda).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/taskexpirylambda"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(taskexpirylambda.New(stack).Handle)
}
