// Command task-expiry takes the tasks DynamoDB's TTL deleted out of their
// accounts' history counters; the tasks table's stream feeds it
// (shared/awsstack/expiry).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/expiry"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(expiry.New(stack).Handle)
}
