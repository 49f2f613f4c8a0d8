// Command mcp is the Lambda of POST /mcp: gen's MCP tools over Streamable HTTP, stateless, the key as a bearer token.
// main assembles it (shared/awsstack/mcplambda): the DynamoDB store, S3,
// Step Functions, the service on them, and the REST routes the tools call
// in-process. Its API Gateway integration streams the response
// (responseTransferMode STREAM), so that a wait sends its progress
// notifications as the task moves, past API Gateway's 29 seconds.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/awsstack/mcplambda"
)

func main() {
	s := endpoint.MustDeployment()
	lambda.Start(endpoint.StreamHandler(endpoint.Must(mcplambda.Handler(s))))
}
