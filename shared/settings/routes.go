package settings

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/strictjson"
)

// Routes is GEN_ROUTES: the provider routes of our models, as JSON, so
// that an operator can write it in an environment variable and in a
// CloudFormation parameter alike:
//
//	{"routes": [
//	   {"name": "vertex-east", "kind": "vertex", "project": "p1", "location": "us-east4"},
//	   {"name": "gemini", "kind": "gemini", "apiKey": "AIza..."},
//	   {"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000",
//	    "usdPerSecond": 0.02, "models": {"gen-3.1-lite-generate-001": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}],
//	 "models": {"gen-3.1-fast-generate-001": ["vertex-east", "gemini"],
//	            "gen-3.1-lite-generate-001": ["wan", "vertex-east"]}}
//
// A route is one backend, as the generator variables describe one
// (GEN_GENERATOR's kinds, each with its own endpoint and credentials);
// "models" lists, for each of our models, the routes it goes to in the
// order they are tried. A model it does not list goes to the route the
// generator variables describe, which is named after GEN_GENERATOR
// ("builtin", "vertex", ...) and may be listed by that name too. Unset,
// every model has that one route: GEN_GENERATOR as before.
const Routes = "GEN_ROUTES"

// RouteSpec is one route of GEN_ROUTES, as written.
type RouteSpec struct {
	// Name names the route in lists, operation names, logs and billing:
	// lower-case letters, digits and hyphens, at most 32.
	Name string `json:"name"`
	// Kind is a generator: builtin, vertex, gemini, openai, omni or
	// omni-vertex.
	Kind string `json:"kind"`
	// Project, Location and AccessToken are a vertex or omni-vertex
	// route's, StorageURI a vertex route's (GEN_VERTEX_*).
	Project     string `json:"project,omitempty"`
	Location    string `json:"location,omitempty"`
	StorageURI  string `json:"storageUri,omitempty"`
	AccessToken string `json:"accessToken,omitempty"`
	// Endpoint replaces the API's base URL (GEN_VERTEX_ENDPOINT,
	// GEN_GEMINI_ENDPOINT, GEN_OPENAI_ENDPOINT).
	Endpoint string `json:"endpoint,omitempty"`
	// APIKey is a gemini, omni or openai route's key, for a local stack;
	// APIKeySecretARN names a Secrets Manager secret holding it, on AWS.
	APIKey          string `json:"apiKey,omitempty"`
	APIKeySecretARN string `json:"apiKeySecretArn,omitempty"`
	// Profile is an openai route's (GEN_OPENAI_PROFILE).
	Profile string `json:"profile,omitempty"`
	// USDPerSecond prices a self-hosted host's video (the vllm-omni
	// profile only; GEN_OPENAI_USD_PER_SECOND).
	USDPerSecond float64 `json:"usdPerSecond,omitempty"`
	// Models maps our model ids to the route's provider model ids
	// (GEN_PROVIDER_MODELS); the ones left out keep the kind's default.
	Models map[string]string `json:"models,omitempty"`
	// Modes, when set, are the only task types the route is given
	// (text-to-video, image-to-video, first-last-frame): a self-hosted
	// text-only model (Wan2.2-T2V) sends image starts to the next route.
	Modes []string `json:"modes,omitempty"`
}

// RouteTable is GEN_ROUTES read.
type RouteTable struct {
	Routes []RouteSpec         `json:"routes"`
	Models map[string][]string `json:"models,omitempty"`
}

// RouteConfig is one route's configuration resolved: its name, and the
// backend it is, as the generator variables would describe it alone
// (the poll interval and the credit price are the stack's).
type RouteConfig struct {
	Name     string
	Provider ProviderConfig
	// APIKeySecretARN, when set, holds the key of a gemini or openai
	// route: the AWS stack reads it into Provider at start-up.
	APIKeySecretARN string
	// Modes, when set, narrow the task types the route is given.
	Modes []string
}

// DefaultRoute is the name of the route the generator variables
// describe: GEN_GENERATOR's value, "builtin" when unset.
func (p ProviderConfig) DefaultRoute() string {
	if p.Generator == "" {
		return GeneratorBuiltin
	}
	return p.Generator
}

// defaultRoute is the route the generator variables describe, its kind
// said even where GEN_GENERATOR is not: a route's kind is what builds its
// provider (issue 31, defect 1: an unset kind built none).
func (p ProviderConfig) defaultRoute() RouteConfig {
	d := p
	d.Routes = ""
	d.Generator = p.DefaultRoute()
	return RouteConfig{Name: p.DefaultRoute(), Provider: d}
}

// ModelRoutes is the routes of each of our models, in the order they
// are tried: GEN_ROUTES, the generator variables' route for a model it
// does not list. Routes reads a value Provider checked.
func (p ProviderConfig) ModelRoutes() map[string][]RouteConfig {
	t, _ := parseRoutes(p.Routes)
	byName := map[string]RouteConfig{p.DefaultRoute(): p.defaultRoute()}
	for _, s := range t.Routes {
		byName[s.Name] = s.route(p)
	}
	out := map[string][]RouteConfig{}
	for _, id := range p.Catalog().IDs() {
		names, ok := t.Models[id]
		switch {
		case ok:
		case id == catalog.OmniFlashID && !isOmni(p.DefaultRoute()):
			// Our Omni model goes where Omni is: the Omni routes, in
			// their order.
			for _, s := range t.Routes {
				if isOmni(s.Kind) {
					names = append(names, s.Name)
				}
			}
		default:
			names = []string{p.DefaultRoute()}
		}
		for _, n := range names {
			out[id] = append(out[id], byName[n])
		}
	}
	return out
}

// AllRoutes is every route some model uses, each once, by name.
func (p ProviderConfig) AllRoutes() []RouteConfig {
	var out []RouteConfig
	byModel := p.ModelRoutes()
	for _, id := range p.Catalog().IDs() {
		for _, r := range byModel[id] {
			if !slices.ContainsFunc(out, func(o RouteConfig) bool { return o.Name == r.Name }) {
				out = append(out, r)
			}
		}
	}
	return out
}

// route is s as the generator variables would say it, with the stack's
// poll interval and credit price.
func (s RouteSpec) route(p ProviderConfig) RouteConfig {
	q := ProviderConfig{Generator: s.Kind, PollInterval: p.PollInterval, CreditUSD: p.CreditUSD}
	switch s.Kind {
	case GeneratorVertex, GeneratorOmniVertex:
		q.VertexProject, q.VertexLocation, q.VertexStorageURI = s.Project, s.Location, s.StorageURI
		q.VertexEndpoint, q.VertexAccessToken = s.Endpoint, s.AccessToken
	case GeneratorGemini, GeneratorOmni:
		// Omni is on the Gemini API: the same key and endpoint.
		q.GeminiAPIKey, q.GeminiEndpoint = s.APIKey, s.Endpoint
	case GeneratorOpenAI:
		q.OpenAIAPIKey, q.OpenAIEndpoint, q.OpenAIProfile, q.OpenAIUSDPerSecond = s.APIKey, s.Endpoint, s.Profile, s.USDPerSecond
	}
	var pairs []string
	for _, ours := range slices.Sorted(maps.Keys(s.Models)) {
		pairs = append(pairs, ours+"="+s.Models[ours])
	}
	q.Models = strings.Join(pairs, ",")
	return RouteConfig{Name: s.Name, Provider: q, APIKeySecretARN: s.APIKeySecretARN, Modes: s.Modes}
}

var routeName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// parseRoutes reads GEN_ROUTES; an error says what is wrong without
// repeating a value that could be a secret.
func parseRoutes(v string) (RouteTable, error) {
	var t RouteTable
	if strings.TrimSpace(v) == "" {
		return t, nil
	}
	// The one strict decoder: exact field names, each once, no null,
	// nothing after the object; its errors never quote a value.
	if err := strictjson.Unmarshal([]byte(v), &t); err != nil {
		return RouteTable{}, fmt.Errorf("want JSON {\"routes\": [...], \"models\": {...}}: %w", err)
	}
	return t, nil
}

// checkRoutes is what is wrong with t, given the default route's name.
func checkRoutes(t RouteTable, defaultName string, cat *catalog.Catalog) []string {
	var errs []string
	names := map[string]bool{defaultName: true}
	for i, s := range t.Routes {
		where := fmt.Sprintf("route %d", i+1)
		if routeName.MatchString(s.Name) {
			where = fmt.Sprintf("route %q", s.Name)
		}
		switch {
		case !routeName.MatchString(s.Name):
			errs = append(errs, where+": want a name of lower-case letters, digits and hyphens, at most 32")
		case names[s.Name] && s.Name == defaultName:
			errs = append(errs, where+": the name is the generator variables' route's ("+Generator+"); choose another")
		case names[s.Name]:
			errs = append(errs, where+": the name is used twice")
		}
		names[s.Name] = true
		errs = append(errs, s.problems(where, cat)...)
	}
	for _, id := range slices.Sorted(maps.Keys(t.Models)) {
		if _, ok := cat.Lookup(id); !ok {
			errs = append(errs, fmt.Sprintf("models: %q is not one of ours (%s)", id, strings.Join(cat.IDs(), ", ")))
			continue
		}
		list := t.Models[id]
		if len(list) == 0 {
			errs = append(errs, fmt.Sprintf("models: %s lists no route", id))
		}
		for j, n := range list {
			if !names[n] {
				errs = append(errs, fmt.Sprintf("models: %s lists %q, which is no route", id, n))
			}
			if slices.Index(list, n) != j {
				errs = append(errs, fmt.Sprintf("models: %s lists %q twice", id, n))
			}
		}
	}
	return errs
}

// problems are what is wrong with one route; where names it.
func (s RouteSpec) problems(where string, cat *catalog.Catalog) []string {
	var errs []string
	bad := func(field, want string) { errs = append(errs, fmt.Sprintf("%s: %s: %s", where, field, want)) }
	only := func(kinds string, fields map[string]bool) {
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if fields[f] {
				bad(f, "only a "+kinds+" route takes it")
			}
		}
	}
	if s.Endpoint != "" && !isBaseURL(s.Endpoint) {
		bad("endpoint", "want an http:// or https:// URL with no path")
	}
	for ours, theirs := range s.Models {
		if _, ok := cat.Lookup(ours); !ok || strings.TrimSpace(theirs) == "" || strings.ContainsAny(theirs, ",=") {
			bad("models", fmt.Sprintf("want our model id (%s) to the provider's model id", strings.Join(cat.IDs(), ", ")))
			break
		}
	}
	for _, m := range s.Modes {
		if m != catalog.TextToVideo && m != catalog.ImageToVideo && m != catalog.FirstLastFrame {
			bad("modes", fmt.Sprintf("want %s, %s or %s", catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame))
			break
		}
	}
	if s.APIKey != "" && s.APIKeySecretARN != "" {
		bad("apiKey", "give apiKey or apiKeySecretArn, not both")
	}
	switch s.Kind {
	case GeneratorBuiltin:
		only("vertex, gemini, omni, omni-vertex or openai", map[string]bool{"endpoint": s.Endpoint != "",
			"apiKey": s.APIKey != "" || s.APIKeySecretARN != "", "models": len(s.Models) > 0})
	case GeneratorVertex, GeneratorOmniVertex:
		if s.Project == "" {
			article := map[string]string{GeneratorVertex: "a", GeneratorOmniVertex: "an"}[s.Kind]
			bad("project", article+" "+s.Kind+" route needs the Google Cloud project")
		}
		if s.Location != "" && !isRegion(s.Location) {
			bad("location", "want a Google Cloud region such as us-central1")
		}
		if s.StorageURI != "" && !isGCSPrefix(s.StorageURI) {
			bad("storageUri", "want gs://bucket or gs://bucket/prefix")
		}
		// A key with a project would leave which API, and whose bill,
		// to a guess: the kind says it.
		only("gemini, omni or openai", map[string]bool{"apiKey": s.APIKey != "" || s.APIKeySecretARN != ""})
	case GeneratorGemini, GeneratorOmni:
		if s.APIKey == "" && s.APIKeySecretARN == "" {
			article := map[string]string{GeneratorGemini: "a", GeneratorOmni: "an"}[s.Kind]
			bad("apiKey", article+" "+s.Kind+" route needs apiKey or apiKeySecretArn")
		}
	case GeneratorOpenAI:
		switch {
		case s.Profile == "":
			bad("profile", strings.Replace(ProfileChoices, "the openai generator", "an openai route", 1))
		case !isProfile(s.Profile):
			bad("profile", "want openai or vllm-omni")
		}
		if s.Profile == ProfileVLLMOmni && s.Endpoint == "" {
			bad("endpoint", "a vllm-omni host needs its URL")
		}
	default:
		bad("kind", "want "+generatorChoices)
	}
	if s.Kind != GeneratorVertex && s.Kind != GeneratorOmniVertex {
		// Omni on Vertex AI is its own kind: a project on an omni route
		// is refused, not taken as a second API.
		only("vertex or omni-vertex", map[string]bool{"project": s.Project != "", "location": s.Location != "", "accessToken": s.AccessToken != ""})
	}
	if s.Kind != GeneratorVertex {
		// Omni on Vertex AI takes its video inline (shared/provider/omni).
		only("vertex", map[string]bool{"storageUri": s.StorageURI != ""})
	}
	if s.Kind != GeneratorOpenAI {
		only("openai", map[string]bool{"profile": s.Profile != ""})
	}
	if s.USDPerSecond < 0 || s.USDPerSecond > 100 {
		bad("usdPerSecond", "want 0 to 100")
	}
	if s.USDPerSecond != 0 && (s.Kind != GeneratorOpenAI || s.Profile != ProfileVLLMOmni) {
		bad("usdPerSecond", "only a self-hosted host (kind openai, profile vllm-omni) is priced by the operator")
	}
	return errs
}

// routes reads GEN_ROUTES, checked against the default route's name.
// Its value is never repeated in an error: it may hold keys.
func (r *Reader) routes(defaultName string, cat *catalog.Catalog) string {
	v := r.value(Routes)
	t, err := parseRoutes(v)
	if err != nil {
		r.Reject(Routes, "(not shown)", err.Error())
		return ""
	}
	if errs := checkRoutes(t, defaultName, cat); len(errs) > 0 {
		r.Reject(Routes, "(not shown)", strings.Join(errs, "; "))
		return ""
	}
	return v
}
