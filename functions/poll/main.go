// Command poll is the Lambda of the generation state machine's Poll
// state: the Generate step's code (a task with an operation handle is
// polled, never submitted again) in a small function, since a poll is one
// HTTPS request to the provider; once the operation is done it stores the
// videos in S3. Ordinary ends of a generation come back as the Outcome's
// failure, other failures as the workflow's named errors, unwrapped.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/generate"
	"github.com/genvideo/gen/shared/awsstack/providerconfig"
)

func main() {
	stack, err := providerconfig.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	steps, err := generate.Steps(stack)
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(steps.GenerateOutcome)
}
