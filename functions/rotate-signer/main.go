// Command rotate-signer is the Secrets Manager rotation function of the
// signing user's access key (see shared/awsstack/rotatesignerlambda): it
// replaces the key before the current one, so that links signed in the last
// 24 hours keep working. It also makes the user's first key and removes its
// keys before the user goes (the stack's Custom::SignerKey). It reads only
// what it needs and never exits at cold start: CloudFormation waits for its
// answer (rotatesignerlambda.FromEnv).
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/rotatesignerlambda"
)

func main() {
	lambda.Start(rotatesignerlambda.FromEnv(os.LookupEnv, os.Stdout).Handle)
}
