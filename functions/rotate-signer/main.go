// Command rotate-signer is the Secrets Manager rotation function of the
// signing user's access key (see shared/awsstack/rotate): it replaces the
// key before the current one, so that links signed in the last 24 hours
// keep working. It also makes the user's first key and removes its keys
// before the user goes (the stack's Custom::SignerKey).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/rotate"
)

func main() {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	r, err := rotate.New(stack)
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(r.Handle)
}
