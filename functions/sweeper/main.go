// Command sweeper runs on a schedule: it fails and refunds tasks past
// their deadline and starts the executions of tasks that have none (see
// shared/sweeper). The scheduled event's content is not used.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/sweeperlambda"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	sw, err := sweeperlambda.New(stack)
	if err != nil {
		awsstack.Exit(err)
	}
	// Scheduled: a task that fails is left to the next sweep, not retried
	// by EventBridge with the whole sweep.
	lambda.Start(sw.Scheduled)
}
