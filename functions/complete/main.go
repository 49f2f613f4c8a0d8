// Command complete is the Lambda of the generation state machine's
// Complete state: processing -> completed with the videos, refunding filtered samples. It returns the workflow's named errors unwrapped, so that
// Step Functions sees their type names.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/providerconfig"
	"github.com/genvideo/gen/shared/awsstack/steps"
)

func main() {
	stack, err := providerconfig.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(steps.New(stack).Complete)
}
