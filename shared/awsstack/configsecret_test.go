package awsstack

import (
	"strings"
	"testing"
)

const configARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-provider-config-AbCdEf"

// wanModels and wanRoutes are what an operator would put in Models and
// Routes: a model of their own on a self-hosted host.
const (
	wanModels = `{"models": [{"modelId": "wan-2.2-720p", "name": "Wan 2.2", "capabilities": ["text-to-video"],
		"resolutions": ["720p"], "pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 40}}]}`
	wanRoutes = `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000",
		"apiKey": "sk-NEVER-SHOWN"}], "models": {"wan-2.2-720p": ["wan"]}}`
)

// Issue 34, defect 9: the provider configuration's secret is read by the
// settings' own readers and checks, as GEN_ROUTES and GEN_MODELS would
// be: what it declares is what GEN_PROVIDER_MODELS is checked against,
// its errors name the secret and quote nothing of it, and the secret
// beside either variable is refused.
func TestParseEnvWithProviderConfig(t *testing.T) {
	withARN := map[string]string{EnvProviderConfigSecretARN: configARN,
		EnvProviderModels: "wan-2.2-720p=Wan-AI/Wan2.2-T2V-A14B-Diffusers"}

	e, err := ParseEnvWith(lookup(withARN), `{"routes": `+wanRoutes+`, "models": `+wanModels+`}`)
	if err != nil {
		t.Fatalf("ParseEnvWith: %v", err)
	}
	if e.ProviderConfigSecretARN != configARN || e.Provider.Routes != strings.TrimSpace(wanRoutes) || e.Provider.Declared != strings.TrimSpace(wanModels) {
		t.Errorf("Env = %+v, want the secret's routes and models", e)
	}
	if _, ok := e.Provider.Catalog().Lookup("wan-2.2-720p"); !ok || len(e.Provider.ModelRoutes()["wan-2.2-720p"]) != 1 {
		t.Errorf("the secret's model is not in the catalog, or not routed: %v", e.Provider.ModelRoutes()["wan-2.2-720p"])
	}
	// Without the secret's models, the mapping names no model of ours:
	// the same checks ran on what the secret holds.
	if _, err := ParseEnv(lookup(withARN)); err == nil || !strings.Contains(err.Error(), EnvProviderModels) {
		t.Errorf("ParseEnv without the secret's string: %v, want %s refused", err, EnvProviderModels)
	}
	// Either member alone.
	if e, err := ParseEnvWith(lookup(map[string]string{EnvProviderConfigSecretARN: configARN}), `{"models": `+wanModels+`}`); err != nil || e.Provider.Routes != "" {
		t.Errorf("models alone: %+v, %v", e.Provider, err)
	}

	for _, tc := range []struct {
		name, secret string
		env          map[string]string
		want         []string // what the error names
	}{
		{"not JSON", `routes: [wan]`, nil, []string{EnvProviderConfigSecretARN + `="` + configARN + `"`, "want JSON"}},
		{"an unknown member", `{"route": ` + wanRoutes + `}`, nil, []string{EnvProviderConfigSecretARN, "route"}},
		{"a member given twice", `{"models": ` + wanModels + `, "models": ` + wanModels + `}`, nil, []string{EnvProviderConfigSecretARN, "models"}},
		{"routes as a string", `{"routes": "{\"routes\": []}"}`, nil, []string{EnvProviderConfigSecretARN, `"routes": want a JSON object`}},
		{"a route the settings refuse", `{"routes": {"routes": [{"name": "x", "kind": "teleport", "apiKey": "sk-NEVER-SHOWN"}]}}`, nil,
			[]string{EnvRoutes + " (the provider configuration secret " + configARN + ")=", "kind"}},
		{"a model the settings refuse", `{"models": {"models": [{"modelId": "Bad Id"}]}}`, nil,
			[]string{EnvModels + " (the provider configuration secret " + configARN + ")=", "modelId"}},
		{"the secret and GEN_ROUTES", `{"models": ` + wanModels + `}`, map[string]string{EnvRoutes: wanRoutes}, []string{EnvRoutes + "=", EnvProviderConfigSecretARN}},
		{"the secret and GEN_MODELS", `{"routes": ` + wanRoutes + `}`, map[string]string{EnvModels: wanModels}, []string{EnvModels + "=", EnvProviderConfigSecretARN}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvProviderConfigSecretARN: configARN}
			for k, v := range tc.env {
				env[k] = v
			}
			_, err := ParseEnvWith(lookup(env), tc.secret)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "NEVER-SHOWN") {
				t.Errorf("error %q quotes the secret", err)
			}
		})
	}
	// The template's environment is checked without the secret's string
	// (infra/deploy): the variables beside it are refused there too, and
	// a malformed ARN is.
	if _, err := ParseEnv(lookup(map[string]string{EnvProviderConfigSecretARN: configARN, EnvRoutes: wanRoutes})); err == nil || !strings.Contains(err.Error(), EnvRoutes) {
		t.Errorf("ParseEnv of the secret and GEN_ROUTES: %v, want GEN_ROUTES refused", err)
	}
	if _, err := ParseEnv(lookup(map[string]string{EnvProviderConfigSecretARN: "gen-provider-config"})); err == nil || !strings.Contains(err.Error(), EnvProviderConfigSecretARN) {
		t.Errorf("ParseEnv of a secret name for its ARN: %v, want it refused", err)
	}
}

// A function that does not read the provider configuration refuses to
// start with the secret's ARN rather than run on the contract's catalog.
func TestFromEnvRefusesTheProviderConfigSecret(t *testing.T) {
	for k, v := range map[string]string{EnvTablePrefix: "gen-", EnvProviderConfigSecretARN: configARN, "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	if _, err := FromEnv(t.Context()); err == nil || !strings.Contains(err.Error(), EnvProviderConfigSecretARN) {
		t.Errorf("FromEnv with %s: %v, want a refusal naming it", EnvProviderConfigSecretARN, err)
	}
}
