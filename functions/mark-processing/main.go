// Command mark-processing is the Lambda of the generation state machine's
// MarkProcessing state: pending -> processing. It returns the workflow's named errors unwrapped, so that
// Step Functions sees their type names, and a start past the task's
// deadline as the answer's failure, which counts as no Lambda error.
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
	lambda.Start(steps.New(stack).MarkProcessingOutcome)
}
