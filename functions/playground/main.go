// Command playground is the Lambda of GET / and GET /playground/{file}:
// the web page for people holding an API key (shared/playground). Both
// routes are public (no key, no authorizer): the page holds no secret and
// is compiled in, so the function needs no table, bucket, state machine
// or secret. API Gateway REST proxy events reach the shared net/http
// handler through the aws-lambda-go-api-proxy adapter.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/playgroundlambda"
)

func main() {
	h, err := playgroundlambda.Handler()
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
