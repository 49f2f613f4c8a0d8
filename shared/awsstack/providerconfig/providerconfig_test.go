package providerconfig

import (
	"context"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
)

// ReadEnv reads the secret GEN_PROVIDER_CONFIG_SECRET_ARN names, once,
// from Secrets Manager, and only when it is set; a secret it cannot read
// stops the cold start naming the variable and the secret.
func TestReadEnv(t *testing.T) {
	const (
		arn     = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-provider-config-AbCdEf"
		missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-no-such-config-AbCdEf"
		routes  = `{"routes": [{"name": "cards", "kind": "builtin"}], "models": {"gen-3.1-lite-generate-001": ["cards"]}}`
	)
	secrets := awsstacktest.NewSecrets(t)
	secrets.Put(arn, `{"routes": `+routes+`}`)
	sdk := settings.Vars{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "ASIATEST", "AWS_SECRET_ACCESS_KEY": "x",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": secrets.URL}
	cfg := awsstack.LambdaConfig(sdk.Lookup)
	ctx := context.Background()

	e, err := ReadEnv(ctx, settings.Vars{}.Lookup, cfg)
	if err != nil || e.Provider.Routes != "" || secrets.Reads() != 0 {
		t.Fatalf("without the variable: %+v, %v, %d reads; want no routes and no read", e.Provider, err, secrets.Reads())
	}
	e, err = ReadEnv(ctx, settings.Vars{awsstack.EnvProviderConfigSecretARN: arn}.Lookup, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.Provider.Routes != routes || e.Provider.ModelRoutes()["gen-3.1-lite-generate-001"][0].Name != "cards" || secrets.Reads() != 1 {
		t.Errorf("with the secret: routes %q (%d reads), want the secret's, read once", e.Provider.Routes, secrets.Reads())
	}
	_, err = ReadEnv(ctx, settings.Vars{awsstack.EnvProviderConfigSecretARN: missing}.Lookup, cfg)
	if err == nil || !strings.Contains(err.Error(), awsstack.EnvProviderConfigSecretARN) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a secret that does not exist: %v, want an error naming the variable and the secret", err)
	}
	// A malformed ARN is not looked up; ParseEnv names it.
	_, err = ReadEnv(ctx, settings.Vars{awsstack.EnvProviderConfigSecretARN: "gen-provider-config"}.Lookup, cfg)
	if err == nil || !strings.Contains(err.Error(), awsstack.EnvProviderConfigSecretARN+`="gen-provider-config"`) || secrets.Reads() != 2 {
		t.Errorf("a secret's name for its ARN: %v (%d reads), want it refused unread", err, secrets.Reads())
	}
}
