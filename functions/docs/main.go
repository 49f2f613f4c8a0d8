// Command docs is the Lambda of GET /openapi.json and GET /docs: the
// OpenAPI document of the contract and the page that renders it. Both are
// public (no key, no authorizer), and the documents are compiled in, so
// the function needs no table, bucket, state machine or secret.
// API Gateway REST proxy events reach the shared net/http handler through
// the aws-lambda-go-api-proxy adapter.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/docslambda"
)

func main() {
	h, err := docslambda.Handler()
	if err != nil {
		awsstack.Exit(err)
	}
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
