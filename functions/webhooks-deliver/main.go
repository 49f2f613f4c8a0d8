// Command webhooks-deliver sends the webhook events of the outbox (the
// webhooks table): woken by the table's stream when a move writes new
// events, and every minute by a schedule for the retries that are due.
// It runs the local stack's worker (shared/webhook/delivery), through
// shared/awsstack/webhooksdeliverlambda.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/webhooksdeliverlambda"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(webhooksdeliverlambda.New(stack).Handle)
}
