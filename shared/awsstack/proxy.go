package awsstack

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// ProxyFunc handles API Gateway REST proxy events; lambda.Start takes it.
type ProxyFunc func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// MustProxy builds the named endpoint (httpapi.Endpoint*) from the
// environment and adapts it to API Gateway REST proxy events, base64
// bodies included. On bad configuration it exits with a message naming the
// problem (Exit), so that the cold start fails loudly, not the requests.
func MustProxy(name string) ProxyFunc {
	stack, err := FromEnv(context.Background())
	if err != nil {
		Exit(err)
	}
	h, err := stack.Endpoint(name)
	if err != nil {
		Exit(err)
	}
	return httpadapter.New(h).ProxyWithContext
}
