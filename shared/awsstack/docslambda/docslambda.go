// Package docslambda builds the handler of the docs Lambda: GET /openapi.json
// and GET /docs (httpapi.PublicDocs). The documents are compiled in, so it
// needs no table, bucket, state machine or secret, and loads no AWS
// configuration.
package docslambda

import (
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/httpapi"
)

// Handler returns the docs handler. It uses GEN_LOG_LEVEL only (the
// environment is still parsed whole, so a malformed value fails the cold
// start as in every function). Like awsstack.FromEnv, it makes its JSON
// logger the default one.
func Handler() (http.Handler, error) {
	h, logger, err := handler(os.LookupEnv, os.Stdout)
	if err != nil {
		return nil, err
	}
	slog.SetDefault(logger)
	return h, nil
}

// handler is Handler on an environment and a log destination.
func handler(lookup func(string) (string, bool), w io.Writer) (http.Handler, *slog.Logger, error) {
	env, err := awsstack.ParseEnv(lookup)
	if err != nil {
		return nil, nil, err
	}
	logger := awsstack.NewLogger(w, env.LogLevel)
	return httpapi.PublicDocs(logger), logger, nil
}
