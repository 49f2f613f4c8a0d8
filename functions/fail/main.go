// Command fail is the Lambda of the generation state machine's
// RecordFailure state: the task fails and its credits are refunded. It returns the workflow's named errors unwrapped, so that
// Step Functions sees their type names.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/steps"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(steps.New(stack).Fail)
}
