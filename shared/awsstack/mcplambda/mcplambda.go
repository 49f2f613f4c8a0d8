// Package mcplambda assembles the MCP Lambda (functions/mcp): gen's
// MCP tools (shared/mcpserver) over the REST routes they call, which it
// serves in-process over one service on the stack's DynamoDB, S3 and
// Step Functions, as each route's own Lambda serves it. It is a package
// of its own so that no other Lambda links the MCP SDK.
package mcplambda

import (
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/awsstack/executions"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/intake"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/service"
)

// MaxWait bounds wait_for_task on AWS: a streamed response through API
// Gateway is cut after 5 minutes without a byte ("Stream the integration
// response for your proxy integrations in API Gateway",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html,
// read 2026-11-26), and a task that does not move sends nothing while it
// is waited for. The template's Lambda timeout is above it.
const MaxWait = 4 * time.Minute

// routes are the REST endpoints the tools call.
var routes = []httpapi.Endpoint{httpapi.TextToVideo, httpapi.ImageToVideo, httpapi.FirstLastFrame, httpapi.Quote,
	httpapi.Status, httpapi.Cancel, httpapi.History, httpapi.Credits, httpapi.Models}

// Handler is the MCP endpoint of the stack s: its own service, with the
// image checks and the workflow's executions of a start, behind the
// routes the tools call. Images reach those routes in-process, not
// through API Gateway, so they are held to the contract's 20 MiB alone;
// the MCP request that brings one in base64 is held to API Gateway's and
// Lambda's caps before it arrives.
func Handler(s *awsstack.Deployment) (http.Handler, error) {
	blobs, err := endpoint.Media(s)
	if err != nil {
		return nil, err
	}
	flows, err := executions.New(s)
	if err != nil {
		return nil, err
	}
	cfg := endpoint.Config(s, blobs, flows)
	cfg.Images = intake.New(blobs, 0)
	svc := service.New(cfg)
	api := httpapi.Router(svc, endpoint.Cursors(s), routes...)
	return mcpserver.NewHandler(mcpserver.HTTPConfig{API: api, Keys: svc, Logger: s.Logger,
		Options: mcpserver.Options{Fetcher: mcpserver.URLFetcher(s.Env.WebhookAllowPrivate), MaxWait: MaxWait}}), nil
}
