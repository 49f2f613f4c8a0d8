package settings

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/strictjson"
)

// DeclaredModels is GEN_MODELS: the models the operator offers besides,
// or instead of, the contract's three, as JSON (an environment variable
// and a CloudFormation parameter alike), each written as GET
// /api/gen/models shows one:
//
//	{"models": [
//	   {"modelId": "wan-2.2-720p", "name": "Wan 2.2 (720p)",
//	    "description": "Open model on our own GPU.",
//	    "capabilities": ["text-to-video"], "resolutions": ["720p"],
//	    "pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 40}}],
//	 "defaultModel": "gen-3.1-fast-generate-001"}
//
// A model whose id is the contract's replaces it; the others are added
// after the contract's, in their order. A model routed to a provider
// model gen has no table for says what that model accepts and costs
// ("provider": durations, aspectRatios, audio, seed, usdPerSecond), and
// the start-up price check holds it to that cost as to gen's own
// tables. Its routes are GEN_ROUTES' or GEN_PROVIDER_MODELS' like any
// model's. A bad value stops start-up, naming the member.
const DeclaredModels = "GEN_MODELS"

// ModelsSpec is GEN_MODELS as written.
type ModelsSpec struct {
	Models       []ModelSpec `json:"models"`
	DefaultModel string      `json:"defaultModel,omitempty"`
}

// ModelSpec is one declared model.
type ModelSpec struct {
	ModelID      string             `json:"modelId"`
	Name         string             `json:"name"`
	Description  string             `json:"description,omitempty"`
	Capabilities []string           `json:"capabilities"`
	Resolutions  []string           `json:"resolutions"`
	Pricing      PricingSpec        `json:"pricing"`
	Provider     *ProviderModelSpec `json:"provider,omitempty"`
}

// PricingSpec is a declared model's price in credits, as /models shows
// it.
type PricingSpec struct {
	CreditsPerVideo        int `json:"creditsPerVideo"`
	CreditsPerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
}

// ProviderModelSpec is catalog.ProviderModel as written.
type ProviderModelSpec struct {
	Durations    []int    `json:"durations"`
	AspectRatios []string `json:"aspectRatios"`
	Audio        string   `json:"audio"`
	Seed         bool     `json:"seed,omitempty"`
	USDPerSecond float64  `json:"usdPerSecond"`
}

// The bounds of a declared model: what the contract's validator and
// the providers' tables know (shared/params, shared/provider).
var (
	declaredID          = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	declaredResolutions = []string{"1080p", "720p"}
	declaredDurations   = []int{4, 6, 8}
	declaredAspects     = []string{"16:9", "9:16"}
	declaredAudio       = []string{"optional", "always", "never"}
	allCapabilities     = []string{catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame, catalog.AudioGeneration}
)

const (
	maxDeclaredModels    = 32
	maxModelName         = 80
	maxModelDescription  = 300
	maxCreditsPerVideo   = 1_000_000
	maxDeclaredUSDPerSec = 100
)

// Catalog is p's catalog: the contract's models, our Omni model where a
// route serves Gemini Omni (catalog.OmniFlash), and the models GEN_MODELS
// declares. Its values were checked when read.
func (p ProviderConfig) Catalog() *catalog.Catalog {
	c, _ := declare(p.Declared, offersOmni(p.Generator, p.Routes))
	return c
}

// OwnCatalog reports whether p's catalog is other than the contract's,
// so that a stack installs it (catalog.Install).
func (p ProviderConfig) OwnCatalog() bool {
	return p.Declared != "" || offersOmni(p.Generator, p.Routes)
}

// isOmni: a route of kind serves Gemini Omni Flash.
func isOmni(kind string) bool { return kind == GeneratorOmni || kind == GeneratorOmniVertex }

// offersOmni: the generator, or a route of GEN_ROUTES, serves Gemini
// Omni Flash, and so our model of it is offered.
func offersOmni(generator, routes string) bool {
	if isOmni(generator) {
		return true
	}
	t, _ := parseRoutes(routes)
	return slices.ContainsFunc(t.Routes, func(s RouteSpec) bool { return isOmni(s.Kind) })
}

// declare reads GEN_MODELS into a catalog, over the contract's (and our
// Omni model, when omni); errors name the member, never a value.
func declare(v string, omni bool) (*catalog.Catalog, []string) {
	base := catalog.Builtin()
	if omni {
		base = base.With([]catalog.Model{catalog.OmniFlash()}, "")
	}
	if strings.TrimSpace(v) == "" {
		return base, nil
	}
	var s ModelsSpec
	if err := strictjson.Unmarshal([]byte(v), &s); err != nil {
		return base, []string{fmt.Sprintf("want JSON {\"models\": [...]}: %v", err)}
	}
	var errs []string
	if len(s.Models) == 0 || len(s.Models) > maxDeclaredModels {
		errs = append(errs, fmt.Sprintf("models: want 1 to %d models", maxDeclaredModels))
	}
	var models []catalog.Model
	seen := map[string]bool{}
	for i, m := range s.Models {
		where := fmt.Sprintf("models[%d]", i)
		if seen[m.ModelID] {
			errs = append(errs, where+".modelId: declared twice")
		}
		seen[m.ModelID] = true
		model, problems := m.model(where)
		errs = append(errs, problems...)
		models = append(models, model)
	}
	if len(errs) > 0 {
		return base, errs
	}
	c := base.With(models, s.DefaultModel)
	if _, ok := c.Lookup(c.Default()); !ok {
		return base, []string{fmt.Sprintf("defaultModel: not one of the models (%s)", strings.Join(c.IDs(), ", "))}
	}
	return c, nil
}

// model is m checked; where names it in errors.
func (m ModelSpec) model(where string) (catalog.Model, []string) {
	var errs []string
	bad := func(field, want string) { errs = append(errs, fmt.Sprintf("%s.%s: %s", where, field, want)) }
	if !declaredID.MatchString(m.ModelID) {
		bad("modelId", "want lower-case letters, digits, dots, hyphens and underscores, at most 64")
	}
	if !printable(m.Name, 1, maxModelName) {
		bad("name", fmt.Sprintf("want 1 to %d printable characters", maxModelName))
	}
	if !printable(m.Description, 0, maxModelDescription) {
		bad("description", fmt.Sprintf("want at most %d printable characters", maxModelDescription))
	}
	modes := 0
	for j, c := range m.Capabilities {
		switch {
		case !slices.Contains(allCapabilities, c):
			bad(fmt.Sprintf("capabilities[%d]", j), "want "+strings.Join(allCapabilities, ", "))
		case slices.Index(m.Capabilities, c) != j:
			bad(fmt.Sprintf("capabilities[%d]", j), "listed twice")
		case c != catalog.AudioGeneration:
			modes++
		}
	}
	if modes == 0 {
		bad("capabilities", "want at least one of "+strings.Join(catalog.Modes, ", "))
	}
	if !subset(m.Resolutions, declaredResolutions) {
		bad("resolutions", "want one or more of "+strings.Join(declaredResolutions, ", ")+", each once, the default first")
	}
	for field, n := range map[string]int{"creditsPerVideo": m.Pricing.CreditsPerVideo, "creditsPerVideoNoAudio": m.Pricing.CreditsPerVideoNoAudio} {
		if n < 1 || n > maxCreditsPerVideo {
			bad("pricing."+field, fmt.Sprintf("want a whole number of credits from 1 to %d", maxCreditsPerVideo))
		}
	}
	out := catalog.Model{ID: m.ModelID, Name: m.Name, Description: m.Description,
		Capabilities: slices.Clone(m.Capabilities), Resolutions: slices.Clone(m.Resolutions),
		CreditsPerVideo: m.Pricing.CreditsPerVideo, CreditsPerVideoNoAudio: m.Pricing.CreditsPerVideoNoAudio}
	if p := m.Provider; p != nil {
		if !subset(p.Durations, declaredDurations) {
			bad("provider.durations", "want one or more of 4, 6, 8, each once")
		}
		if !subset(p.AspectRatios, declaredAspects) {
			bad("provider.aspectRatios", "want one or more of "+strings.Join(declaredAspects, ", ")+", each once")
		}
		if !slices.Contains(declaredAudio, p.Audio) {
			bad("provider.audio", "want "+strings.Join(declaredAudio, ", "))
		}
		if !(p.USDPerSecond > 0 && p.USDPerSecond <= maxDeclaredUSDPerSec) {
			bad("provider.usdPerSecond", fmt.Sprintf("want what a second of its video costs, above 0 and at most %d", maxDeclaredUSDPerSec))
		}
		out.Provider = &catalog.ProviderModel{Durations: slices.Clone(p.Durations), AspectRatios: slices.Clone(p.AspectRatios),
			Audio: p.Audio, Seed: p.Seed, USDPerSecond: p.USDPerSecond}
	}
	slices.Sort(errs)
	return out, errs
}

// subset: vs is not empty, lists each value once, and only values of
// allowed.
func subset[T comparable](vs, allowed []T) bool {
	if len(vs) == 0 {
		return false
	}
	for i, v := range vs {
		if !slices.Contains(allowed, v) || slices.Index(vs, v) != i {
			return false
		}
	}
	return true
}

// printable: s has lo to hi characters, none a control character.
func printable(s string, lo, hi int) bool {
	n := len([]rune(s))
	return n >= lo && n <= hi && !strings.ContainsFunc(s, unicode.IsControl) && (lo == 0 || strings.TrimSpace(s) != "")
}

// declared reads GEN_MODELS; its errors are reported with the others,
// and the catalog it declares is what the other variables are checked
// against (a route may name a declared model).
func (r *Reader) declared() (string, *catalog.Catalog) {
	v := r.value(DeclaredModels)
	c, errs := declare(v, offersOmni(r.value(Generator), r.value(Routes)))
	if len(errs) > 0 {
		r.Reject(DeclaredModels, "(not shown)", strings.Join(errs, "; "))
		return "", c
	}
	return v, c
}
