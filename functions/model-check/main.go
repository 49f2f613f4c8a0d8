// Command model-check runs on a schedule (hourly): it asks each provider
// route which of its models it serves and writes what each found to the
// store, so that the API refuses, before charging it, a start of a model
// none of whose routes serves it (see shared/awsstack/modelchecklambda). The
// scheduled event's content is not used.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/modelchecklambda"
	"github.com/genvideo/gen/shared/awsstack/providerconfig"
)

func main() {
	ctx := context.Background()
	stack, err := providerconfig.FromEnv(ctx)
	if err != nil {
		awsstack.Exit(err)
	}
	c, err := modelchecklambda.New(ctx, stack)
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(c.Scheduled)
}
