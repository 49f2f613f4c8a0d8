package awsstacktest

import (
	"encoding/json"
	"fmt"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/settings"
)

// ProviderConfigSecretARN names the provider configuration's secret in
// the tests (template parameter ProviderConfigSecretArn).
const ProviderConfigSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-provider-config-AbCdEf"

// What ManyRoutes routes where: a model of the operator's own, on the
// built-in generator, and the route it alone goes to; the contract's
// lite model goes to two routes, its quality model to one that makes text
// starts only.
const (
	DeclaredModelID     = "cards-720p"
	DeclaredModelRoute  = "cards-042"
	DeclaredModelPrice  = 20
	TextOnlyRoute       = "cards-text-only"
	TextOnlyRoutedModel = "gen-3.1-generate-001"
)

// ManyRoutes is a provider configuration's secret string
// (awsstack.ConfigSecret) of n built-in routes, cards-001 to cards-<n>
// (n at least 42), and the model DeclaredModelID, far past Lambda's 4 KB
// environment when n is large: what an operator with many routes puts
// in ProviderConfigSecretArn. Every route is the built-in generator, so
// that the AWS assembly runs its starts with ffmpeg alone.
func ManyRoutes(n int) string {
	if n < 42 {
		panic("ManyRoutes: want at least 42 routes")
	}
	routes := settings.RouteTable{Models: map[string][]string{
		DeclaredModelID:             {DeclaredModelRoute},
		"gen-3.1-lite-generate-001": {"cards-007", "cards-008"},
		TextOnlyRoutedModel:         {TextOnlyRoute},
	}}
	for i := 1; i <= n; i++ {
		routes.Routes = append(routes.Routes, settings.RouteSpec{Name: fmt.Sprintf("cards-%03d", i), Kind: settings.GeneratorBuiltin})
	}
	routes.Routes = append(routes.Routes, settings.RouteSpec{Name: TextOnlyRoute, Kind: settings.GeneratorBuiltin, Modes: []string{"text-to-video"}})
	models := settings.ModelsSpec{Models: []settings.ModelSpec{{
		ModelID: DeclaredModelID, Name: "Test cards (720p)", Description: "The built-in generator's cards, as a model of the operator's own.",
		Capabilities: []string{"text-to-video"}, Resolutions: []string{"720p"},
		Pricing: settings.PricingSpec{CreditsPerVideo: DeclaredModelPrice, CreditsPerVideoNoAudio: DeclaredModelPrice},
	}}}
	r, err := json.Marshal(routes)
	if err != nil {
		panic(err)
	}
	m, err := json.Marshal(models)
	if err != nil {
		panic(err)
	}
	b, err := json.Marshal(awsstack.ConfigSecret{Routes: r, Models: m})
	if err != nil {
		panic(err)
	}
	return string(b)
}
