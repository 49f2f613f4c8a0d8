package awsstack

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/strictjson"
)

// ConfigSecret is the JSON object the GEN_PROVIDER_CONFIG_SECRET_ARN
// secret holds: the provider routes and the declared models, each
// written exactly as its variable (and template parameter) would hold
// it, so that moving them from the parameters Routes and Models to the
// secret is a copy:
//
//	{"routes": {"routes": [{"name": "gemini", "kind": "gemini", "apiKeySecretArn": "arn:..."}, ...],
//	            "models": {"gen-3.1-fast-generate-001": ["vertex", "gemini"]}},
//	 "models": {"models": [{"modelId": "wan-2.2-720p", ...}]}}
//
// Either member may be left out. A secret string holds up to 64 KB
// (Secrets Manager's quota), where Lambda leaves a function's whole
// environment 4 KB.
type ConfigSecret struct {
	// Routes is what GEN_ROUTES would hold (settings.Routes).
	Routes json.RawMessage `json:"routes,omitempty"`
	// Models is what GEN_MODELS would hold (settings.DeclaredModels).
	Models json.RawMessage `json:"models,omitempty"`
}

// providerConfigVars reads the secret's string into the variables it
// stands for, which the settings then read and check as they read and
// check the environment (settings.Reader.From). The error never quotes
// the string: routes may hold keys.
func providerConfigVars(secret string) (settings.Vars, error) {
	var c ConfigSecret
	if err := strictjson.Unmarshal([]byte(secret), &c); err != nil {
		return nil, fmt.Errorf(`want JSON {"routes": <what %s holds>, "models": <what %s holds>}: %w`, EnvRoutes, EnvModels, err)
	}
	vars := settings.Vars{}
	for _, m := range []struct {
		member, name string
		raw          json.RawMessage
	}{{"routes", EnvRoutes, c.Routes}, {"models", EnvModels, c.Models}} {
		if m.raw == nil {
			continue
		}
		if !bytes.HasPrefix(bytes.TrimSpace(m.raw), []byte("{")) {
			return nil, fmt.Errorf("%q: want a JSON object, as %s holds", m.member, m.name)
		}
		vars[m.name] = string(m.raw)
	}
	return vars, nil
}

// ParseEnvWith is ParseEnv with the string of the secret
// EnvProviderConfigSecretARN names, read by the caller
// (awsstack/providerconfig): its routes and models take the place of
// EnvRoutes and EnvModels, read and checked by the same code, and every
// error in it is reported with the others, naming the secret.
func ParseEnvWith(lookup func(string) (string, bool), providerConfig string) (Env, error) {
	return parseEnv(lookup, &providerConfig)
}
