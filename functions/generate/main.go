// Command generate is the Lambda of the generation state machine's
// Generate state: it renders the task's videos with ffmpeg (from a layer,
// /opt/bin/ffmpeg, or GEN_FFMPEG_PATH) and stores them in S3. It returns
// the workflow's named errors unwrapped, so that Step Functions sees their
// type names, and the ordinary ends of a generation (refused, timed out,
// failed) as its Outcome's failure, which counts as no Lambda error.
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
