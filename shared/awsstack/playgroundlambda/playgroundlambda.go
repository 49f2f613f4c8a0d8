// Package playgroundlambda builds the handler of the playground Lambda: the
// web page at / and its files under /playground/ (shared/playground),
// public like the docs. The page is compiled in, so the function needs no
// table, bucket, state machine or secret, and loads no AWS configuration;
// it reads only the origin the videos and uploads come from. Nor does it
// read the provider configuration (the routes and the operator's models,
// which may be in a secret): the page takes the models, their limits and
// prices from GET /api/gen/models with the user's key, and its
// limits.json holds the contract's bounds.
package playgroundlambda

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/playground"
	"github.com/genvideo/gen/shared/settings"
)

// EnvMediaOrigins is the one variable the function reads besides the
// log level (awsstack.EnvPlaygroundMediaOrigins).
const EnvMediaOrigins = awsstack.EnvPlaygroundMediaOrigins

// Handler returns the playground's handler. A malformed variable fails
// the cold start, with every bad value named, as in every function. Like
// awsstack.FromEnv, it makes its JSON logger the default one.
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
	awsstack.InstallCatalog(env)
	r := settings.NewReader(lookup)
	origins := splitOrigins(r.Check(EnvMediaOrigins, func(v string) bool {
		for _, o := range splitOrigins(v) {
			if playground.CheckOrigin(o) != nil {
				return false
			}
		}
		return true
	}, "want origins such as https://bucket.s3.us-east-1.amazonaws.com, separated by commas"))
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	logger := awsstack.NewLogger(w, env.LogLevel)
	h, err := playground.Handler(playground.Config{MediaOrigins: origins, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	return h, logger, nil
}

func splitOrigins(v string) []string {
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, strings.TrimSuffix(o, "/"))
		}
	}
	return out
}
