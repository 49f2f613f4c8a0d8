package deploy

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/workflow"
)

// root is the module root, where template.yaml is.
const root = "../.."

func loadTemplate(t *testing.T) *template {
	t.Helper()
	tp, err := readTemplate(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatalf("read template.yaml: %v", err)
	}
	return tp
}

func TestTemplateReferencesResolve(t *testing.T) {
	tp := loadTemplate(t)
	problems, used := tp.referenceProblems()
	for _, p := range problems {
		t.Errorf("template.yaml %s", p)
	}
	// A parameter or condition nobody reads is a reference that was
	// misspelt where it is used.
	for name := range tp.Parameters {
		if !used[name] {
			t.Errorf("template.yaml: parameter %s is never referenced", name)
		}
	}
	for name := range tp.Conditions {
		if !used[name] {
			t.Errorf("template.yaml: condition %s is never used", name)
		}
	}
}

// TestReferenceCheckCatchesMistakes proves the checks above can fail: a
// template with one mistake of each kind must be reported for each, and
// the short-form tags must come through parsing intact.
func TestReferenceCheckCatchesMistakes(t *testing.T) {
	const broken = `
Parameters:
  Stage: {Type: String, Default: v1}
  Unused: {Type: String, Default: x}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-${Stag}"
  Fn:
    Type: AWS::Serverless::Function
    DependsOn: Tabel
    Properties:
      CodeUri: functions/x
      Environment:
        Variables:
          A: !Ref Tabel
          B: !GetAtt Table.Arn
          C: !GetAtt Table.Nope
          D: !Sub "${Table.Arn}/${Missing.Arn}/${!Literal}"
          E: !If [IsStaging, a, b]
          F: !Sub ["${X}-${Y}", {X: !Ref Stage}]
          G: !Ref FnRole
          H: !Join ["", [!Ref AWS::Region, !Ref AWS::Regoin]]
`
	raw, err := parseYAML([]byte(broken))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	// Tags survive: B is a GetAtt of Table's Arn, not the string "Table.Arn".
	b := dig(raw, "Resources", "Fn", "Properties", "Environment", "Variables", "B")
	if got, want := mustJSON(t, b), `{"Fn::GetAtt":["Table","Arn"]}`; got != want {
		t.Errorf("!GetAtt Table.Arn parsed as %s, want %s", got, want)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := readTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	problems, used := tp.referenceProblems()
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"Ref Stag names no",
		"Ref Tabel names no",
		"DependsOn: Tabel is not a resource",
		"GetAtt Table.Nope: AWS::DynamoDB::Table has no attribute Nope",
		"GetAtt Missing.Arn: no resource Missing",
		"condition IsStaging is not defined",
		"Ref Y names no",
		"Ref AWS::Regoin names no",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the check did not report %q; it reported:\n%s", want, all)
		}
	}
	if got, want := len(problems), 8; got != want {
		t.Errorf("got %d problems, want %d (FnRole, ${!Literal}, X and Table.Arn are fine):\n%s", got, want, all)
	}
	if used["Unused"] {
		t.Errorf("parameter Unused counted as used")
	}

	if _, err := parseYAML([]byte("A: !Reff B\n")); err == nil || !strings.Contains(err.Error(), "unknown tag !Reff") {
		t.Errorf("parse of an unknown tag: got error %v, want one naming !Reff", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pascal turns a function directory (text-to-video) into the prefix of
// its logical id (TextToVideo).
func pascal(dir string) string {
	var b strings.Builder
	for _, part := range strings.Split(dir, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func TestFunctions(t *testing.T) {
	tp := loadTemplate(t)
	g := mapAt(tp.Globals, "Function")
	for _, c := range []struct {
		key  string
		want any
	}{
		{"Runtime", "provided.al2023"},
		{"Architectures", []any{"arm64"}},
		{"Handler", "bootstrap"},
		{"Tracing", "Active"},
		{"LoggingConfig", map[string]any{"LogFormat": "JSON", "LogGroup": map[string]any{"Ref": "FunctionLogGroup"}}},
	} {
		if got := g[c.key]; mustJSON(t, got) != mustJSON(t, c.want) {
			t.Errorf("Globals.Function.%s = %s, want %s", c.key, mustJSON(t, got), mustJSON(t, c.want))
		}
	}

	// The functions' log group keeps its logs for a while, not forever.
	if lg := tp.Resources["FunctionLogGroup"]; lg.Type != "AWS::Logs::LogGroup" || lg.Properties["RetentionInDays"] == nil {
		t.Errorf("FunctionLogGroup is a %q with retention %v, want a log group with a retention", lg.Type, lg.Properties["RetentionInDays"])
	}

	inTemplate := map[string]string{} // function directory -> logical id
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		r := tp.Resources[id]
		for _, k := range []string{"Runtime", "Architectures", "Handler"} {
			if _, ok := r.Properties[k]; ok {
				t.Errorf("%s sets %s: leave it to Globals", id, k)
			}
		}
		uri, _ := r.Properties["CodeUri"].(string)
		dir, ok := strings.CutPrefix(uri, "functions/")
		if !ok || strings.Contains(dir, "/") {
			t.Errorf("%s: CodeUri %q, want functions/<name>", id, uri)
			continue
		}
		if want := pascal(dir) + "Function"; id != want {
			t.Errorf("function in %s is %s, want logical id %s", uri, id, want)
		}
		if _, err := os.Stat(filepath.Join(root, uri, "main.go")); err != nil {
			t.Errorf("%s: CodeUri %s has no main.go: %v", id, uri, err)
		}
		// sam build's go1.x builder runs `go build` in the CodeUri,
		// which finds the root go.mod; --cached must stay off.
		if got := dig(r.Metadata, "BuildMethod"); got != "go1.x" {
			t.Errorf("%s: Metadata.BuildMethod = %v, want go1.x", id, got)
		}
		inTemplate[dir] = id
	}
	mains, _ := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if len(mains) == 0 {
		t.Errorf("no functions/*/main.go: the template's functions have no code")
	}
	for _, m := range mains {
		dir := filepath.Base(filepath.Dir(m))
		if _, ok := inTemplate[dir]; !ok {
			t.Errorf("functions/%s has a main.go but no function in template.yaml", dir)
		}
	}
}

// route is one route of the contract and the function that serves it.
type route struct {
	method, path, function string
	public                 bool // served without a key
}

// contractRoutes are the endpoints of the specification.
var contractRoutes = []route{
	{"POST", "/api/gen/text-to-video", "TextToVideoFunction", false},
	{"POST", "/api/gen/image-to-video", "ImageToVideoFunction", false},
	{"POST", "/api/gen/first-last-frame", "FirstLastFrameFunction", false},
	{"GET", "/api/gen/status/{taskId}", "StatusFunction", false},
	{"GET", "/api/gen/download/{taskId}", "DownloadFunction", false},
	{"GET", "/api/gen/history", "HistoryFunction", false},
	{"GET", "/api/gen/models", "ModelsFunction", false},
	{"POST", "/api/gen/uploads", "UploadsFunction", false},
	// Extensions: cancel, delete and credits.
	{"POST", "/api/gen/cancel/{taskId}", "CancelFunction", false},
	{"DELETE", "/api/gen/tasks/{taskId}", "DeleteTaskFunction", false},
	{"GET", "/api/gen/credits", "CreditsFunction", false},
	{"PATCH", "/api/gen/credits", "CreditsFunction", false},
	// The live event stream.
	{"GET", "/api/gen/status/{taskId}/events", "StatusEventsFunction", false},
	// Quotes: one function for the three start endpoints.
	{"POST", "/api/gen/quote/{endpoint}", "QuoteFunction", false},
	// Extensions of a task's video (issue 37).
	{"POST", "/api/gen/extend/{taskId}", "ExtendFunction", false},
	// Webhooks: one function per path.
	{"POST", "/api/gen/webhooks", "WebhooksFunction", false},
	{"GET", "/api/gen/webhooks", "WebhooksFunction", false},
	{"GET", "/api/gen/webhooks/secret", "WebhookSecretFunction", false},
	{"DELETE", "/api/gen/webhooks/{webhookId}", "WebhookDeleteFunction", false},
	{"GET", "/api/gen/webhooks/{webhookId}/deliveries", "WebhookDeliveriesFunction", false},
	{"POST", "/api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay", "WebhookReplayFunction", false},
}

// openaiRoutes are the OpenAI-compatible videos API's (shared/openaiapi),
// one function per path, behind bearerAuthorizer.
var openaiRoutes = []route{
	{"POST", "/openai/v1/videos", "OpenaiVideosFunction", false},
	{"GET", "/openai/v1/videos", "OpenaiVideosFunction", false},
	{"GET", "/openai/v1/videos/{taskId}", "OpenaiVideoFunction", false},
	{"DELETE", "/openai/v1/videos/{taskId}", "OpenaiVideoFunction", false},
	{"GET", "/openai/v1/videos/{taskId}/content", "OpenaiContentFunction", false},
	{"POST", "/openai/v1/videos/extensions", "OpenaiExtensionsFunction", false},
}

// mcpRoutes are the MCP endpoint's (shared/mcpserver), behind
// bearerAuthorizer too: MCP hosts send the key as a bearer token.
var mcpRoutes = []route{
	{"POST", "/mcp", "McpFunction", false},
}

// bearerAuthorizer guards the OpenAI-compatible paths and MCP's: the same
// function as the default authorizer, with the Authorization header as
// identity.
const bearerAuthorizer = "BearerAuthorizer"

// apiEvent is an Api event of a function.
type apiEvent struct {
	function, event string
	method, path    string
	restAPI         string
	auth            map[string]any
}

func apiEvents(t *testing.T, tp *template) []apiEvent {
	t.Helper()
	var out []apiEvent
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		for name, ev := range mapAt(tp.Resources[id].Properties, "Events") {
			if dig(ev, "Type") != "Api" {
				continue
			}
			p := mapAt(ev.(map[string]any), "Properties")
			method, _ := p["Method"].(string)
			path, _ := p["Path"].(string)
			restAPI, _ := dig(p, "RestApiId", "Ref").(string)
			out = append(out, apiEvent{function: id, event: name, method: strings.ToUpper(method),
				path: path, restAPI: restAPI, auth: mapAt(p, "Auth")})
		}
	}
	return out
}

func TestRoutes(t *testing.T) {
	tp := loadTemplate(t)
	apis := tp.ofType("AWS::Serverless::Api")
	if len(apis) != 1 {
		t.Fatalf("template.yaml has APIs %v, want exactly one", apis)
	}
	api := apis[0]
	events := apiEvents(t, tp)
	find := func(method, path string) (apiEvent, bool) {
		for _, e := range events {
			if e.method == method && e.path == path {
				return e, true
			}
		}
		return apiEvent{}, false
	}
	routes := slices.Concat(contractRoutes, openaiRoutes, mcpRoutes)
	if _, err := os.Stat(filepath.Join(root, "functions", "docs", "main.go")); err == nil {
		routes = append(routes,
			route{"GET", "/openapi.json", "DocsFunction", true},
			route{"GET", "/docs", "DocsFunction", true},
			route{"GET", "/docs/{file}", "DocsFunction", true})
	}
	if _, err := os.Stat(filepath.Join(root, "functions", "playground", "main.go")); err == nil {
		routes = append(routes,
			route{"GET", "/", "PlaygroundFunction", true},
			route{"GET", "/playground/{file}", "PlaygroundFunction", true})
	}
	matched := map[string]bool{} // function/event
	for _, rt := range routes {
		e, ok := find(rt.method, rt.path)
		if !ok {
			t.Errorf("no route %s %s in template.yaml", rt.method, rt.path)
			continue
		}
		matched[e.function+"/"+e.event] = true
		if e.function != rt.function {
			t.Errorf("%s %s is served by %s, want %s", rt.method, rt.path, e.function, rt.function)
		}
		if e.restAPI != api {
			t.Errorf("%s %s: RestApiId refers to %q, want %s", rt.method, rt.path, e.restAPI, api)
		}
		openai := slices.Contains(openaiRoutes, rt) || slices.Contains(mcpRoutes, rt)
		if rt.public {
			if e.auth["Authorizer"] != "NONE" || e.auth["ApiKeyRequired"] != false {
				t.Errorf("%s %s must be public: Auth = %v", rt.method, rt.path, e.auth)
			}
		} else if openai {
			if len(e.auth) != 1 || e.auth["Authorizer"] != bearerAuthorizer {
				t.Errorf("%s %s: Auth = %v, want {Authorizer: %s} alone (the key as a bearer token, still required)", rt.method, rt.path, e.auth, bearerAuthorizer)
			}
		} else if len(e.auth) != 0 {
			t.Errorf("%s %s overrides the API's authorizer and key requirement: Auth = %v", rt.method, rt.path, e.auth)
		}
		// Any other method reaches the same function, without the
		// authorizer, for the contract's 405 with Allow.
		other, ok := find("ANY", rt.path)
		switch {
		case !ok:
			t.Errorf("no ANY route on %s for the 405 of other methods", rt.path)
		case other.function != rt.function:
			t.Errorf("ANY %s is served by %s, want %s", rt.path, other.function, rt.function)
		case other.auth["Authorizer"] != "NONE" || other.auth["ApiKeyRequired"] != false:
			t.Errorf("ANY %s: Auth = %v, want no authorizer and no key (the function answers 405 before it needs one)", rt.path, other.auth)
		default:
			matched[other.function+"/"+other.event] = true
		}
	}
	for _, e := range events {
		if !matched[e.function+"/"+e.event] {
			t.Errorf("%s has route %s %s (event %s), which the contract does not have", e.function, e.method, e.path, e.event)
		}
	}

	props := tp.Resources[api].Properties
	if got := props["BinaryMediaTypes"]; !slices.Contains(toStrings(got), "multipart~1form-data") {
		t.Errorf("%s.BinaryMediaTypes = %v, want multipart~1form-data (SAM's escape of multipart/form-data)", api, got)
	}
	if got := props["ApiKeySourceType"]; got != "AUTHORIZER" {
		t.Errorf("%s.ApiKeySourceType = %v, want AUTHORIZER", api, got)
	}
	auth := mapAt(props, "Auth")
	if auth["ApiKeyRequired"] != true {
		t.Errorf("%s.Auth.ApiKeyRequired = %v, want true", api, auth["ApiKeyRequired"])
	}
	def, _ := auth["DefaultAuthorizer"].(string)
	az := mapAt(mapAt(auth, "Authorizers"), def)
	if got := az["FunctionPayloadType"]; got != "REQUEST" {
		t.Errorf("authorizer %q: FunctionPayloadType = %v, want REQUEST", def, got)
	}
	if got := dig(az, "FunctionArn", "Fn::GetAtt"); mustJSON(t, got) != `["AuthorizerFunction","Arn"]` {
		t.Errorf("authorizer %q: FunctionArn = %v, want !GetAtt AuthorizerFunction.Arn", def, got)
	}
	if got := toStrings(dig(az, "Identity", "Headers")); !slices.Equal(got, []string{"X-API-Key"}) {
		t.Errorf("authorizer %q: identity headers %v, want [X-API-Key]", def, got)
	}
	if ttl, _ := dig(az, "Identity", "ReauthorizeEvery").(int); ttl < 60 || ttl > 3600 {
		t.Errorf("authorizer %q: ReauthorizeEvery = %v, want a cache of 60..3600 seconds", def, dig(az, "Identity", "ReauthorizeEvery"))
	}
	bz := mapAt(mapAt(auth, "Authorizers"), bearerAuthorizer)
	if bz["FunctionPayloadType"] != "REQUEST" || mustJSON(t, dig(bz, "FunctionArn", "Fn::GetAtt")) != `["AuthorizerFunction","Arn"]` ||
		!slices.Equal(toStrings(dig(bz, "Identity", "Headers")), []string{"Authorization"}) {
		t.Errorf("authorizer %s = %v, want AuthorizerFunction as a REQUEST authorizer on the Authorization header", bearerAuthorizer, bz)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func TestUsagePlans(t *testing.T) {
	tp := loadTemplate(t)
	plans := tp.ofType("AWS::ApiGateway::UsagePlan")
	// Set B: the per-minute budget becomes the plan's rate per second,
	// the daily one its quota, the concurrency figure its burst.
	for _, c := range []struct {
		id     string
		limits func() (int, int)
		burst  int
	}{
		{"StandardUsagePlan", func() (int, int) {
			return ratelimit.StandardLimits.RequestsPerMinute, ratelimit.StandardLimits.RequestsPerDay
		}, 10},
		{"ProUsagePlan", func() (int, int) {
			return ratelimit.ProLimits.RequestsPerMinute, ratelimit.ProLimits.RequestsPerDay
		}, 50},
	} {
		if !slices.Contains(plans, c.id) {
			t.Errorf("no usage plan %s (plans: %v)", c.id, plans)
			continue
		}
		p := tp.Resources[c.id].Properties
		rpm, rpd := c.limits()
		if got, want := dig(p, "Throttle", "RateLimit"), rpm/60; got != want {
			t.Errorf("%s: Throttle.RateLimit = %v, want %d (%d a minute)", c.id, got, want, rpm)
		}
		if got := dig(p, "Throttle", "BurstLimit"); got != c.burst {
			t.Errorf("%s: Throttle.BurstLimit = %v, want %d", c.id, got, c.burst)
		}
		if got := dig(p, "Quota", "Limit"); got != rpd {
			t.Errorf("%s: Quota.Limit = %v, want %d", c.id, got, rpd)
		}
		if got := dig(p, "Quota", "Period"); got != "DAY" {
			t.Errorf("%s: Quota.Period = %v, want DAY", c.id, got)
		}
		stages, _ := p["ApiStages"].([]any)
		if len(stages) != 1 || mustJSON(t, dig(stages[0], "ApiId")) != `{"Ref":"GenApi"}` ||
			mustJSON(t, dig(stages[0], "Stage")) != `{"Ref":"GenApi.Stage"}` {
			t.Errorf("%s: ApiStages = %s, want the stage of GenApi", c.id, mustJSON(t, p["ApiStages"]))
		}
	}
}

// gatewayResponse is what the checks expect of one of API Gateway's own
// responses.
type gatewayResponse struct {
	status  int    // 0: API Gateway's own status is kept
	code    string // error code
	message string // exact message, or "" for any
	headers []string
	// challenge is the WWW-Authenticate of a 401.
	challenge string
}

var wantGatewayResponses = map[string]gatewayResponse{
	"UNAUTHORIZED":                 {401, wire.CodeUnauthorized, httpapi.MessageKeyMissing, nil, mcpserver.ChallengeMissing},
	"ACCESS_DENIED":                {401, wire.CodeUnauthorized, httpapi.MessageKeyInvalid, nil, mcpserver.ChallengeInvalid},
	"INVALID_API_KEY":              {401, wire.CodeUnauthorized, httpapi.MessageKeyInvalid, nil, mcpserver.ChallengeInvalid},
	"MISSING_AUTHENTICATION_TOKEN": {404, wire.CodeNotFound, "", nil, ""},
	"THROTTLED":                    {429, wire.CodeRateLimit, "", []string{"Retry-After", "X-RateLimit-Retry-After"}, ""},
	"QUOTA_EXCEEDED":               {429, wire.CodeDailyLimit, "", []string{"Retry-After", "X-RateLimit-Retry-After"}, ""},
	"REQUEST_TOO_LARGE":            {413, wire.CodeFileTooLarge, "", nil, ""},
	"AUTHORIZER_FAILURE":           {503, wire.CodeUnavailable, "", []string{"Retry-After"}, ""},
	// An authorizer that errs (the key store down) is this one, not
	// AUTHORIZER_FAILURE: without it the client got a 500.
	"AUTHORIZER_CONFIGURATION_ERROR": {503, wire.CodeUnavailable, "", []string{"Retry-After"}, ""},
	"DEFAULT_4XX":                    {0, "BAD_REQUEST", "", nil, ""},
	"DEFAULT_5XX":                    {0, wire.CodeInternal, "", nil, ""},
}

func TestGatewayResponses(t *testing.T) {
	tp := loadTemplate(t)
	responses := mapAt(tp.Resources["GenApi"].Properties, "GatewayResponses")
	for typ, want := range wantGatewayResponses {
		r, ok := responses[typ].(map[string]any)
		if !ok {
			t.Errorf("no gateway response %s", typ)
			continue
		}
		if got := r["StatusCode"]; want.status != 0 && got != want.status {
			t.Errorf("%s: StatusCode = %v, want %d", typ, got, want.status)
		}
		for _, h := range want.headers {
			v, _ := dig(r, "ResponseParameters", "Headers", h).(string)
			// SAM wants a static header value in single quotes.
			if !regexp.MustCompile(`^'[0-9]+'$`).MatchString(v) {
				t.Errorf("%s: header %s = %q, want a quoted number of seconds", typ, h, v)
			}
		}
		// A 401 carries the Bearer challenge the local /mcp sends.
		v, _ := dig(r, "ResponseParameters", "Headers", "WWW-Authenticate").(string)
		if want.challenge != "" && v != "'"+want.challenge+"'" || want.challenge == "" && v != "" {
			t.Errorf("%s: WWW-Authenticate = %q, want %q quoted", typ, v, want.challenge)
		}
		tmpl, err := tp.eval(dig(r, "ResponseTemplates", "application/json"))
		if err != nil {
			t.Errorf("%s: body template: %v", typ, err)
			continue
		}
		// $context.error.messageString is substituted as a quoted string.
		body := strings.ReplaceAll(tmpl, "$context.error.messageString", `"Some message"`)
		if strings.Contains(body, "$") {
			t.Errorf("%s: body %s has a substitution the check does not know", typ, tmpl)
		}
		checkErrorBody(t, typ, body, want)
	}
	for typ := range responses {
		if _, ok := wantGatewayResponses[typ]; !ok {
			t.Errorf("gateway response %s is not checked: add it to wantGatewayResponses", typ)
		}
	}
}

// checkErrorBody checks body against the contract's error bodies: the
// nested form for 429, the flat one with success=false for the others.
func checkErrorBody(t *testing.T, typ, body string, want gatewayResponse) {
	t.Helper()
	if want.status == 429 {
		var b struct {
			Success *bool `json:"success"`
			Error   struct {
				Code    string
				Message string
				Details map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Errorf("%s: body %s is not JSON: %v", typ, body, err)
			return
		}
		if b.Success != nil || b.Error.Code != want.code || b.Error.Message == "" {
			t.Errorf("%s: body %s, want the nested 429 body with code %s", typ, body, want.code)
		}
		for _, f := range []string{"limit", "remaining", "reset", "retry_after"} {
			if _, err := strconv.ParseInt(string(b.Error.Details[f]), 10, 64); err != nil {
				t.Errorf("%s: error.details.%s = %s, want an integer", typ, f, b.Error.Details[f])
			}
		}
		return
	}
	var b struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Errorf("%s: body %s is not JSON: %v", typ, body, err)
		return
	}
	if b.Success == nil || *b.Success || b.Error != want.code || b.Message == "" {
		t.Errorf("%s: body %s, want success=false, error=%s and a message", typ, body, want.code)
	}
	if want.message != "" && b.Message != want.message {
		t.Errorf("%s: message %q, want %q", typ, b.Message, want.message)
	}
}

func TestTables(t *testing.T) {
	tp := loadTemplate(t)
	prefix, err := tp.eval(dig(tp.Globals, "Function", "Environment", "Variables", awsstack.EnvTablePrefix))
	if err != nil {
		t.Fatalf("Globals %s: %v", awsstack.EnvTablePrefix, err)
	}
	names := dynamostore.New(nil, dynamostore.Config{TablePrefix: prefix}).Tables()
	want := map[string]string{
		"AccountsTable": names.Accounts, "KeysTable": names.Keys,
		"CountersTable": names.Counters, "TasksTable": names.Tasks,
		"WebhooksTable": names.Webhooks,
	}
	tables := tp.ofType("AWS::DynamoDB::Table")
	if len(tables) != len(want) {
		t.Errorf("tables %v, want %d", tables, len(want))
	}
	for id, name := range want {
		r, ok := tp.Resources[id]
		if !ok {
			t.Errorf("no table %s", id)
			continue
		}
		got, err := tp.eval(r.Properties["TableName"])
		if err != nil || got != name {
			t.Errorf("%s: TableName %q (%v), want %q, the name dynamostore derives from %s=%q",
				id, got, err, name, awsstack.EnvTablePrefix, prefix)
		}
		p := r.Properties
		for _, c := range []struct{ path, want string }{
			{"BillingMode", `"PAY_PER_REQUEST"`},
			{"PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled", "true"},
			{"SSESpecification.SSEEnabled", "true"},
		} {
			if got := mustJSON(t, dig(p, strings.Split(c.path, ".")...)); got != c.want {
				t.Errorf("%s: %s = %s, want %s", id, c.path, got, c.want)
			}
		}
		if r.raw["DeletionPolicy"] != "RetainExceptOnCreate" {
			t.Errorf("%s: DeletionPolicy %v, want RetainExceptOnCreate (it holds the ledger; only a failed first create deletes it)", id, r.raw["DeletionPolicy"])
		}
	}
}

func TestBucket(t *testing.T) {
	tp := loadTemplate(t)
	buckets := tp.ofType("AWS::S3::Bucket")
	if len(buckets) != 1 {
		t.Fatalf("buckets %v, want one", buckets)
	}
	id := buckets[0]
	p := tp.Resources[id].Properties
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if dig(p, "PublicAccessBlockConfiguration", k) != true {
			t.Errorf("%s: PublicAccessBlockConfiguration.%s is not true", id, k)
		}
	}
	rules, _ := dig(p, "BucketEncryption", "ServerSideEncryptionConfiguration").([]any)
	if len(rules) == 0 || dig(rules[0], "ServerSideEncryptionByDefault", "SSEAlgorithm") == nil {
		t.Errorf("%s: no default encryption", id)
	}
	expires := map[string]bool{}
	abort := false
	lifecycle, _ := dig(p, "LifecycleConfiguration", "Rules").([]any)
	for _, r := range lifecycle {
		if dig(r, "Status") != "Enabled" {
			continue
		}
		if prefix, ok := dig(r, "Prefix").(string); ok && dig(r, "ExpirationInDays") != nil {
			expires[prefix] = true
		}
		if dig(r, "AbortIncompleteMultipartUpload", "DaysAfterInitiation") != nil {
			abort = true
		}
	}
	videos, _, _ := strings.Cut(workflow.VideoKey("gen_1_x", 0), "/")
	for _, prefix := range []string{"inputs/", videos + "/"} {
		if !expires[prefix] {
			t.Errorf("%s: no lifecycle rule expiring %s", id, prefix)
		}
	}
	if !abort {
		t.Errorf("%s: no lifecycle rule aborting incomplete multipart uploads", id)
	}

	// The bucket policy refuses plain HTTP.
	tls := false
	for _, pid := range tp.ofType("AWS::S3::BucketPolicy") {
		bp := tp.Resources[pid].Properties
		if mustJSON(t, bp["Bucket"]) != `{"Ref":"`+id+`"}` {
			continue
		}
		stmts, _ := dig(bp, "PolicyDocument", "Statement").([]any)
		for _, s := range stmts {
			if dig(s, "Effect") == "Deny" && dig(s, "Condition", "Bool", "aws:SecureTransport") == "false" {
				tls = true
			}
		}
	}
	if !tls {
		t.Errorf("%s: no bucket policy denying requests without TLS (aws:SecureTransport false)", id)
	}
}

// envNames parses shared/awsstack for the Env* constants: the
// environment variables the Lambdas read. Those the local service reads
// too are settings.<Name> there, resolved through shared/settings.
func envNames(t *testing.T) map[string]string {
	t.Helper()
	shared := map[string]string{}
	for name, v := range stringConsts(t, filepath.Join(root, "shared", "settings"), nil) {
		shared["settings."+name] = v
	}
	names := map[string]string{}
	dir := filepath.Join(root, "shared", "awsstack")
	for name, v := range stringConsts(t, dir, shared) {
		if strings.HasPrefix(name, "Env") {
			names[v] = name
		}
	}
	if len(names) == 0 {
		t.Fatalf("no Env* constants in %s", dir)
	}
	return names
}

// stringConsts parses the package in dir for its string constants, by
// name: those written as a literal, and those written as a selector
// (pkg.Name) that refs maps to a value.
func stringConsts(t *testing.T, dir string, refs map[string]string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	consts := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", e.Name(), err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					switch v := vs.Values[i].(type) {
					case *ast.BasicLit:
						if v.Kind == token.STRING {
							consts[n.Name], _ = strconv.Unquote(v.Value)
						}
					case *ast.SelectorExpr:
						if pkg, ok := v.X.(*ast.Ident); ok {
							if value, ok := refs[pkg.Name+"."+v.Sel.Name]; ok {
								consts[n.Name] = value
							}
						}
					}
				}
			}
		}
	}
	return consts
}

// functionEnv is a function's environment with default parameters:
// Globals' variables overlaid with its own.
func functionEnv(t *testing.T, tp *template, id string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, vars := range []any{
		dig(tp.Globals, "Function", "Environment", "Variables"),
		dig(tp.Resources[id].Properties, "Environment", "Variables"),
	} {
		m, _ := vars.(map[string]any)
		for k, v := range m {
			s, err := tp.eval(v)
			if err != nil {
				t.Errorf("%s: %s: %v", id, k, err)
			}
			env[k] = s
		}
	}
	return env
}

// The variables each kind of function needs (awsstack.Env.require).
var (
	endpointEnv = []string{awsstack.EnvTablePrefix, awsstack.EnvBucket, awsstack.EnvStateMachineARN, awsstack.EnvSignerSecretARN}
	needsEnv    = map[string][]string{
		"TextToVideoFunction":       endpointEnv,
		"ExtendFunction":            endpointEnv,
		"ImageToVideoFunction":      endpointEnv,
		"FirstLastFrameFunction":    endpointEnv,
		"StatusFunction":            endpointEnv,
		"DownloadFunction":          endpointEnv,
		"HistoryFunction":           endpointEnv,
		"ModelsFunction":            endpointEnv,
		"UploadsFunction":           endpointEnv,
		"CancelFunction":            endpointEnv,
		"DeleteTaskFunction":        endpointEnv,
		"CreditsFunction":           endpointEnv,
		"QuoteFunction":             endpointEnv,
		"StatusEventsFunction":      endpointEnv,
		"WebhooksFunction":          endpointEnv,
		"WebhookSecretFunction":     endpointEnv,
		"WebhookDeleteFunction":     endpointEnv,
		"WebhookDeliveriesFunction": endpointEnv,
		"WebhookReplayFunction":     endpointEnv,
		"OpenaiVideosFunction":      endpointEnv,
		"OpenaiVideoFunction":       endpointEnv,
		"OpenaiContentFunction":     endpointEnv,
		"OpenaiExtensionsFunction":  endpointEnv,
		"McpFunction":               endpointEnv,
		"WebhooksDeliverFunction":   {awsstack.EnvTablePrefix},
		"RotateSignerFunction":      {awsstack.EnvSignerUser},
		"DocsFunction":              {},                               // the documents are compiled in (awsstack/docslambda)
		"PlaygroundFunction":        {"GEN_PLAYGROUND_MEDIA_ORIGINS"}, // the page is compiled in; the bucket's origin for its CSP
		"AuthorizerFunction":        {awsstack.EnvTablePrefix},
		"MarkProcessingFunction":    {awsstack.EnvTablePrefix},
		"GenerateFunction":          {awsstack.EnvTablePrefix, awsstack.EnvBucket, awsstack.EnvFFmpegPath, awsstack.EnvFontFile, awsstack.EnvGenerator},
		"TaskExpiryFunction":        {awsstack.EnvTablePrefix},
		"PollFunction":              {awsstack.EnvTablePrefix, awsstack.EnvBucket, awsstack.EnvFFmpegPath, awsstack.EnvFontFile, awsstack.EnvGenerator},
		"CompleteFunction":          {awsstack.EnvTablePrefix},
		"FailFunction":              {awsstack.EnvTablePrefix},
		"SweeperFunction":           {awsstack.EnvTablePrefix, awsstack.EnvStateMachineARN},
		"ModelCheckFunction":        {awsstack.EnvTablePrefix, awsstack.EnvGenerator},
	}
)

// providerConfigFunctions are the functions that read the provider
// configuration (awsstack/providerconfig): the starts, quote and models,
// which check, price or list models; Complete, which prices what it
// refunds (lifecycle.PartialRefund); Generate, Poll and the model check,
// which build the routes. Not the playground: public, it reads no
// secret, and its page lists the models GET /api/gen/models gives.
var providerConfigFunctions = []string{"TextToVideoFunction", "ImageToVideoFunction", "FirstLastFrameFunction",
	"OpenaiVideosFunction", "QuoteFunction", "ModelsFunction", "CompleteFunction",
	"GenerateFunction", "PollFunction", "ModelCheckFunction", "ExtendFunction", "OpenaiExtensionsFunction"}

// providerConfigEnv is the provider configuration's variables.
var providerConfigEnv = []string{awsstack.EnvProviderModels, awsstack.EnvRoutes, awsstack.EnvModels, awsstack.EnvProviderConfigSecretARN}

// Issue 34, defect 9: the provider configuration goes to the functions
// that read it, all of its variables (sam local invoke lets env.json set
// only what the template declares), and to no other: a function that does
// not read it must not refuse its cold start over a model mapping that
// names a model only the secret declares, nor carry routes in its 4 KB.
// (That each reads it, and no other is given it, infra/genctl's
// TestMakeInvoke shows: awsstack.FromEnv refuses the secret's ARN.)
func TestProviderConfigOnlyWhereRead(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		env := functionEnv(t, tp, id)
		reads := slices.Contains(providerConfigFunctions, id)
		for _, k := range providerConfigEnv {
			if _, ok := env[k]; ok != reads {
				t.Errorf("%s declares %s: %v, want %v", id, k, ok, reads)
			}
		}
	}
}

// runtimeEnv are the variables a function may set that the Go runtime
// reads, not shared/awsstack: no Env constant names them.
var runtimeEnv = map[string]bool{"GOMEMLIMIT": true}

func TestEnvironment(t *testing.T) {
	tp := loadTemplate(t)
	known := envNames(t)
	set := map[string]bool{}
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		env := functionEnv(t, tp, id)
		for k := range env {
			set[k] = true
			if _, ok := known[k]; !ok && !runtimeEnv[k] {
				t.Errorf("%s sets %s, which shared/awsstack does not read", id, k)
			}
		}
		need, ok := needsEnv[id]
		if !ok {
			t.Errorf("%s: add what it needs to needsEnv", id)
		}
		for _, k := range need {
			if env[k] == "" {
				t.Errorf("%s does not set %s", id, k)
			}
		}
		// The step functions must not know the state machine: it refers
		// to them, and the reference back would be a cycle.
		if _, ok := env[awsstack.EnvStateMachineARN]; ok && slices.Contains(stepFunctions, id) {
			t.Errorf("%s, a step of the state machine, sets %s", id, awsstack.EnvStateMachineARN)
		}
		// The values parse as the Lambda will parse them.
		if _, err := awsstack.ParseEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
			t.Errorf("%s: the template's environment does not parse: %v", id, err)
		}
	}
	for name, constant := range known {
		if !set[name] {
			t.Errorf("awsstack.%s (%s) is set on no function", constant, name)
		}
	}
}

// stepFunctions are the Lambdas of the state machine's Task states.
var stepFunctions = []string{"MarkProcessingFunction", "GenerateFunction", "PollFunction", "CompleteFunction", "FailFunction"}

// policySummary reduces a function's Policies to comparable lines:
// "DynamoDBReadPolicy KeysTable", "s3:GetObject MediaBucket/inputs/*".
func policySummary(t *testing.T, tp *template, id string, policies any) []string {
	t.Helper()
	list, _ := policies.([]any)
	var out []string
	for _, p := range list {
		switch p := p.(type) {
		case string:
			out = append(out, "managed "+p)
		case map[string]any:
			for name, arg := range p {
				if name == "Fn::If" {
					// A policy under a condition: its lines, each
					// prefixed "if <condition>:"; the other branch must
					// be AWS::NoValue.
					branches, _ := arg.([]any)
					if len(branches) != 3 || mustJSON(t, branches[2]) != `{"Ref":"AWS::NoValue"}` {
						t.Errorf("%s: a conditional policy that is not !If [cond, policy, !Ref AWS::NoValue]: %v", id, arg)
						continue
					}
					for _, line := range policySummary(t, tp, id, []any{branches[1]}) {
						out = append(out, fmt.Sprintf("if %v: %s", branches[0], line))
					}
					continue
				}
				if name == "Statement" {
					stmts, _ := arg.([]any)
					for _, s := range stmts {
						out = append(out, statementSummary(t, id, s)...)
					}
					continue
				}
				var target string
				for _, v := range mapAt(p, name) {
					target = refTarget(v)
				}
				out = append(out, name+" "+target)
			}
		}
	}
	sort.Strings(out)
	return out
}

// functionPolicies is what a function (or the state machine) may do: its
// Policies, or those of its Role when it is a role of this template
// (GenerateRole), whose statements are the function's (SAM ignores
// Policies beside a Role).
func functionPolicies(t *testing.T, tp *template, id string) []string {
	t.Helper()
	r := tp.Resources[id]
	role, ok := r.Properties["Role"]
	if !ok {
		return policySummary(t, tp, id, r.Properties["Policies"])
	}
	roleID := refTarget(role)
	if tp.Resources[roleID].Type != "AWS::IAM::Role" || r.Properties["Policies"] != nil {
		t.Errorf("%s has Role %s and Policies %v: give it Policies, or a role of this template and no Policies", id, mustJSON(t, role), r.Properties["Policies"])
	}
	return roleSummary(t, tp, roleID)
}

// roleSummary is policySummary for an AWS::IAM::Role of the template:
// its inline statements (one under a condition prefixed "if <condition>:"),
// beside the managed policies SAM gives a function's own role.
func roleSummary(t *testing.T, tp *template, id string) []string {
	t.Helper()
	p := tp.Resources[id].Properties
	for _, m := range p["ManagedPolicyArns"].([]any) {
		name := refTarget(m)
		if !strings.HasSuffix(name, "/AWSLambdaBasicExecutionRole") && !strings.HasSuffix(name, "/AWSXRayDaemonWriteAccess") {
			t.Errorf("%s: managed policy %s, want only Lambda's basic execution and X-Ray's write access", id, name)
		}
	}
	var out []string
	for _, pol := range p["Policies"].([]any) {
		for _, st := range dig(pol, "PolicyDocument", "Statement").([]any) {
			if f, ok := dig(st, "Fn::If").([]any); ok {
				if len(f) != 3 || mustJSON(t, f[2]) != `{"Ref":"AWS::NoValue"}` {
					t.Errorf("%s: a conditional statement that is not !If [cond, statement, !Ref AWS::NoValue]", id)
					continue
				}
				for _, line := range statementSummary(t, id, f[1]) {
					out = append(out, fmt.Sprintf("if %v: %s", f[0], line))
				}
				continue
			}
			out = append(out, statementSummary(t, id, st)...)
		}
	}
	sort.Strings(out)
	return out
}

// refTarget names what a policy template argument refers to.
func refTarget(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if r, ok := v["Ref"].(string); ok {
			return r
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok {
			return ga[0].(string)
		}
		if f, ok := v["Fn::If"].([]any); ok {
			return refTarget(f[1]) + "|" + refTarget(f[2])
		}
		if s, ok := v["Fn::Sub"].(string); ok {
			// "${MediaBucket.Arn}/inputs/*" reads MediaBucket/inputs/*.
			return subVariable.ReplaceAllStringFunc(s, func(m string) string {
				return strings.TrimSuffix(m[2:len(m)-1], ".Arn")
			})
		}
	}
	return mustJSONString(v)
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func statementSummary(t *testing.T, id string, s any) []string {
	t.Helper()
	if dig(s, "Effect") != "Allow" {
		t.Errorf("%s: a statement that is not Allow: %v", id, s)
	}
	var actions []string
	switch a := dig(s, "Action").(type) {
	case string:
		actions = []string{a}
	case []any:
		actions = toStrings(a)
	}
	var resources []string
	switch r := dig(s, "Resource").(type) {
	case []any:
		for _, e := range r {
			resources = append(resources, refTarget(e))
		}
	default:
		resources = []string{refTarget(r)}
	}
	var out []string
	for _, a := range actions {
		for _, r := range resources {
			out = append(out, a+" "+r)
		}
	}
	return out
}

// The policies each function must have, and nothing else: the tables it
// touches (read or write), the S3 prefixes, StartExecution only where a
// task is started, the signing secret only where URLs are signed.
var (
	signer = "SignerSecret|SignerSecretArn"
	// A start with webhookUrl reads (or creates) the account's signing
	// secret: GetItem and PutItem on the webhooks table, nothing more.
	startPolicies = slices.Concat(readTable("KeysTable"), writeTable("CountersTable"), writeTable("AccountsTable"), writeTable("TasksTable"),
		[]string{"StepFunctionsExecutionPolicy GenerationStateMachine", "dynamodb:GetItem WebhooksTable", "dynamodb:PutItem WebhooksTable"})
	uploadPolicies = append(slices.Clone(startPolicies), "s3:AbortMultipartUpload MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/inputs/*", "s3:PutObject MediaBucket/inputs/*",
		"s3:GetObject MediaBucket/inputs/uploads/*", "s3:ListBucket MediaBucket")
	// The paged lists seal their cursors with a key of the signer
	// secret's (media.CursorKeys).
	cursorPolicies = []string{"AWSSecretsManagerGetSecretValuePolicy " + signer, "if SignerCustomerKey: kms:Decrypt SignerSecretKmsKeyArn"}
	readerPolicies = slices.Concat(cursorPolicies, writeTable("CountersTable"), readTable("KeysTable"), readTable("TasksTable"))
	// Issue 34, defect 9: those the usage plan limits alone
	// (endpoint.GatewayLimited, TestGatewayLimitedWriteNoCounter) only
	// read the counters.
	gatewayLimitedPolicies = slices.Concat(cursorPolicies, readTable("CountersTable"), readTable("KeysTable"), readTable("TasksTable"))
	// The steps' moves write their webhook events in their transaction.
	// A step moves a task: the task, its account and the move's webhook
	// events; never Scan, DeleteItem or BatchWriteItem (issue 24).
	stepPolicies = slices.Concat(writeTable("AccountsTable"), writeTable("TasksTable"), writeTable("WebhooksTable"))
	// Issue 34, defect 9: the provider configuration's secret, and its
	// customer managed key, only where routes or models are read
	// (awsstack/providerconfig), and only when there is one.
	providerConfigPolicies = []string{"if HasProviderConfigSecret: AWSSecretsManagerGetSecretValuePolicy ProviderConfigSecretArn",
		"if ProviderConfigCustomerKey: kms:Decrypt ProviderConfigKmsKeyArn"}
	wantPolicies = map[string][]string{
		// text-to-video takes reference images as image-to-video takes
		// its image (issue 37).
		"TextToVideoFunction": slices.Concat(uploadPolicies, providerConfigPolicies),
		// An extension reads the task's video and copies it to its
		// inputs.
		"ExtendFunction": slices.Concat(startPolicies, providerConfigPolicies, []string{"s3:GetObject MediaBucket/videos/*",
			"s3:AbortMultipartUpload MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/inputs/*", "s3:PutObject MediaBucket/inputs/*"}),
		"ImageToVideoFunction":   slices.Concat(uploadPolicies, providerConfigPolicies),
		"FirstLastFrameFunction": slices.Concat(uploadPolicies, providerConfigPolicies),
		"StatusFunction":         gatewayLimitedPolicies,
		"StatusEventsFunction":   readerPolicies,
		"DownloadFunction":       gatewayLimitedPolicies,
		"HistoryFunction":        slices.Concat(cursorPolicies, writeTable("CountersTable"), readTable("AccountsTable"), readTable("KeysTable"), readTable("TasksTable")),
		"ModelsFunction":         slices.Concat(writeTable("CountersTable"), readTable("KeysTable"), providerConfigPolicies),
		"RotateSignerFunction": {"iam:CreateAccessKey SigningUser", "iam:DeleteAccessKey SigningUser", "iam:ListAccessKeys SigningUser",
			"secretsmanager:DescribeSecret SignerSecret", "secretsmanager:GetSecretValue SignerSecret",
			"secretsmanager:PutSecretValue SignerSecret", "secretsmanager:UpdateSecretVersionStage SignerSecret"},
		"UploadsFunction":        slices.Concat(writeTable("CountersTable"), readTable("KeysTable"), []string{"s3:PutObject MediaBucket/inputs/uploads/*"}),
		"DocsFunction":           {},
		"PlaygroundFunction":     {},
		"AuthorizerFunction":     {"dynamodb:GetItem KeysTable"},
		"MarkProcessingFunction": stepPolicies,
		// The model check, under the same role, writes the routes' checks
		// (items "models:<route>" of the counters table only).
		"GenerateFunction": slices.Concat(writeTable("TasksTable"), []string{"dynamodb:UpdateItem CountersTable", "secretsmanager:GetSecretValue GeminiApiKeySecretArn|arn:AWS::Partition:secretsmanager:AWS::Region:AWS::AccountId:secret:gen-no-gemini-key",
			"secretsmanager:GetSecretValue RouteKeySecretArns|arn:AWS::Partition:secretsmanager:AWS::Region:AWS::AccountId:secret:gen-no-route-key",
			"if GeminiKeyCustomerKey: kms:Decrypt GeminiApiKeyKmsKeyArn", "if RouteKeysCustomerKeys: kms:Decrypt RouteKeyKmsKeyArns",
			"if HasProviderConfigSecret: secretsmanager:GetSecretValue ProviderConfigSecretArn", "if ProviderConfigCustomerKey: kms:Decrypt ProviderConfigKmsKeyArn",
			"s3:AbortMultipartUpload MediaBucket/videos/*", "s3:GetObject MediaBucket/inputs/*", "s3:ListBucket MediaBucket", "s3:PutObject MediaBucket/videos/*"}),
		"CompleteFunction":   slices.Concat(stepPolicies, providerConfigPolicies),
		"PollFunction":       nil, // GenerateFunction's: the same role (init)
		"ModelCheckFunction": nil, // GenerateFunction's: the same role (init)
		"FailFunction":       stepPolicies,
		"SweeperFunction": append(slices.Clone(stepPolicies), "StepFunctionsExecutionPolicy GenerationStateMachine",
			"dynamodb:Scan TasksTable/index/unfinished",
			"states:DescribeExecution arn:AWS::Partition:states:AWS::Region:AWS::AccountId:execution:GenerationStateMachine.Name:*"),
		"GenerationStateMachine": {
			"LambdaInvokePolicy CompleteFunction", "LambdaInvokePolicy FailFunction",
			"LambdaInvokePolicy GenerateFunction", "LambdaInvokePolicy MarkProcessingFunction", "LambdaInvokePolicy PollFunction",
			"logs:CreateLogDelivery *", "logs:DeleteLogDelivery *", "logs:DescribeLogGroups *",
			"logs:DescribeResourcePolicies *", "logs:GetLogDelivery *", "logs:ListLogDeliveries *",
			"logs:PutResourcePolicy *", "logs:UpdateLogDelivery *",
		},
	}
)

// readTable and writeTable are the lines of a public function's statement
// on a table: reads, and reads with conditional writes, on the table and
// its indexes; never Scan, DeleteItem or BatchWriteItem (issue 12).
// The policies of cancel, delete and credits: a cancel fails and refunds
// (accounts and tasks, with the move's webhook events) and stops executions; a delete removes a task item
// and its media; credits reads, and its PATCH updates the key's item
// (the holder's spending caps).
func init() {
	wantPolicies["CancelFunction"] = slices.Concat(readTable("KeysTable"), writeTable("CountersTable"), writeTable("AccountsTable"), writeTable("TasksTable"), writeTable("WebhooksTable"),
		[]string{"states:StopExecution arn:AWS::Partition:states:AWS::Region:AWS::AccountId:execution:GenerationStateMachine.Name:*"})
	wantPolicies["DeleteTaskFunction"] = slices.Concat(readTable("KeysTable"), writeTable("CountersTable"), writeTable("AccountsTable"), writeTable("TasksTable"),
		[]string{"dynamodb:DeleteItem TasksTable", "dynamodb:DeleteItem TasksTable/index/*",
			"s3:DeleteObject MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/videos/*"})
	// The OpenAI-compatible API's: create and list start like
	// image-to-video (no direct uploads), retrieve and delete as status
	// and delete-task, content signs as download.
	wantPolicies["OpenaiVideosFunction"] = slices.Concat(startPolicies, providerConfigPolicies,
		[]string{"s3:AbortMultipartUpload MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/inputs/*", "s3:PutObject MediaBucket/inputs/*"})
	wantPolicies["OpenaiVideoFunction"] = wantPolicies["DeleteTaskFunction"]
	wantPolicies["OpenaiContentFunction"] = gatewayLimitedPolicies
	// OpenAI's videos.extend is the contract's extension.
	wantPolicies["OpenaiExtensionsFunction"] = wantPolicies["ExtendFunction"]
	// The MCP function serves the routes the tools call in-process: the
	// starts as image-to-video (uploads named by id too), cancel with its
	// webhook events and StopExecution, and the cursors and links the
	// reads seal and sign with the signer secret.
	wantPolicies["McpFunction"] = slices.Concat(readTable("KeysTable"), writeTable("CountersTable"), writeTable("AccountsTable"),
		writeTable("TasksTable"), writeTable("WebhooksTable"), cursorPolicies,
		[]string{"StepFunctionsExecutionPolicy GenerationStateMachine",
			"states:StopExecution arn:AWS::Partition:states:AWS::Region:AWS::AccountId:execution:GenerationStateMachine.Name:*",
			"s3:AbortMultipartUpload MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/inputs/*", "s3:PutObject MediaBucket/inputs/*",
			"s3:GetObject MediaBucket/inputs/uploads/*", "s3:ListBucket MediaBucket"})
	wantPolicies["CreditsFunction"] = slices.Concat(cursorPolicies, writeTable("CountersTable"), readTable("AccountsTable"), readTable("KeysTable"),
		tableLines("KeysTable", "dynamodb:UpdateItem"), readTable("TasksTable"))
	// A quote reads the balance and the starts window, and takes and
	// deletes the images it checks as an image start does; the quote of
	// an extension reads the task it names.
	wantPolicies["QuoteFunction"] = slices.Concat(readTable("KeysTable"), writeTable("CountersTable"), readTable("AccountsTable"), readTable("TasksTable"),
		[]string{"s3:AbortMultipartUpload MediaBucket/inputs/*", "s3:DeleteObject MediaBucket/inputs/*", "s3:GetObject MediaBucket/inputs/uploads/*",
			"s3:ListBucket MediaBucket", "s3:PutObject MediaBucket/inputs/*"}, providerConfigPolicies)

	// The webhook endpoints touch the webhooks table, and of the accounts
	// only the condition that the account exists; only the delete of an
	// endpoint deletes, and only items of the accounts' partitions
	// (TestWebhookFunctions). The delivery function claims and records on
	// the webhooks table alone.
	wh := slices.Concat(readTable("KeysTable"), writeTable("CountersTable"))
	checkAccount := []string{"dynamodb:ConditionCheckItem AccountsTable"}
	wantPolicies["WebhooksFunction"] = slices.Concat(wh, checkAccount, writeTable("WebhooksTable"))
	wantPolicies["WebhookSecretFunction"] = slices.Concat(wh, checkAccount, []string{"dynamodb:GetItem WebhooksTable", "dynamodb:PutItem WebhooksTable"})
	wantPolicies["WebhookDeleteFunction"] = slices.Concat(wh, writeTable("WebhooksTable"), []string{"dynamodb:DeleteItem WebhooksTable"})
	wantPolicies["WebhookDeliveriesFunction"] = slices.Concat(cursorPolicies, wh, readTable("WebhooksTable"))
	wantPolicies["WebhookReplayFunction"] = slices.Concat(wh, writeTable("WebhooksTable"))
	wantPolicies["WebhooksDeliverFunction"] = writeTable("WebhooksTable")
	wantPolicies["PollFunction"] = wantPolicies["GenerateFunction"]
	wantPolicies["ModelCheckFunction"] = wantPolicies["GenerateFunction"]
	// Expired tasks: the account's counts and a marker (issue 24).
	wantPolicies["TaskExpiryFunction"] = writeTable("AccountsTable")
}

func readTable(table string) []string {
	return tableLines(table, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
}

func writeTable(table string) []string {
	return tableLines(table, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem")
}

func tableLines(table string, actions ...string) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a+" "+table, a+" "+table+"/index/*")
	}
	return out
}

func TestLeastPrivilege(t *testing.T) {
	tp := loadTemplate(t)
	ids := append(tp.ofType("AWS::Serverless::Function"), tp.ofType("AWS::Serverless::StateMachine")...)
	for _, id := range ids {
		got := functionPolicies(t, tp, id)
		want, ok := wantPolicies[id]
		if !ok {
			t.Errorf("%s: add its policies to wantPolicies; it has:\n  %s", id, strings.Join(got, "\n  "))
			continue
		}
		want = slices.Clone(want)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s policies:\n  %s\nwant:\n  %s", id, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		for _, p := range got {
			action, _, _ := strings.Cut(p, " ")
			if strings.HasSuffix(action, ":*") || action == "*" {
				t.Errorf("%s: wildcard action in %q", id, p)
			}
		}
	}
	// The signing user may read videos and nothing else.
	if u, ok := tp.Resources["SigningUser"]; ok {
		var got []string
		for _, pol := range u.Properties["Policies"].([]any) {
			for _, s := range dig(pol, "PolicyDocument", "Statement").([]any) {
				got = append(got, statementSummary(t, "SigningUser", s)...)
			}
		}
		if want := []string{"s3:GetObject MediaBucket/videos/*"}; !slices.Equal(got, want) {
			t.Errorf("SigningUser may %v, want %v", got, want)
		}
	} else {
		t.Errorf("no SigningUser")
	}
}

// aslPlaceholder matches a ${Name} of the definition.
var aslPlaceholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

func TestStateMachineResource(t *testing.T) {
	tp := loadTemplate(t)
	sms := tp.ofType("AWS::Serverless::StateMachine")
	if len(sms) != 1 {
		t.Fatalf("state machines %v, want one", sms)
	}
	p := tp.Resources[sms[0]].Properties
	uri, _ := p["DefinitionUri"].(string)
	data, err := os.ReadFile(filepath.Join(root, uri))
	if err != nil {
		t.Fatalf("DefinitionUri %q: %v", uri, err)
	}
	placeholders := map[string]bool{}
	for _, m := range aslPlaceholder.FindAllStringSubmatch(string(data), -1) {
		placeholders[m[1]] = true
	}
	subs := mapAt(p, "DefinitionSubstitutions")
	for name := range placeholders {
		if _, ok := subs[name]; !ok {
			t.Errorf("%s has ${%s}, which DefinitionSubstitutions does not fill", uri, name)
		}
	}
	for name, v := range subs {
		if !placeholders[name] {
			t.Errorf("DefinitionSubstitutions.%s fills nothing in %s", name, uri)
		}
		// <Step>FunctionArn is the Arn of <Step>Function.
		fn := strings.TrimSuffix(name, "Arn")
		if got := mustJSON(t, v); got != `{"Fn::GetAtt":["`+fn+`","Arn"]}` {
			t.Errorf("DefinitionSubstitutions.%s = %s, want !GetAtt %s.Arn", name, got, fn)
		}
		if !slices.Contains(stepFunctions, fn) {
			t.Errorf("DefinitionSubstitutions.%s names %s, which is not a step function %v", name, fn, stepFunctions)
		}
	}
	if len(placeholders) != len(stepFunctions) {
		t.Errorf("%s has placeholders %v, want one per step function %v", uri, placeholders, stepFunctions)
	}
	if got := p["Type"]; got != "STANDARD" {
		t.Errorf("state machine Type %v, want STANDARD (a generation may take longer than an Express workflow's 5 minutes)", got)
	}
	if dig(p, "Tracing", "Enabled") != true {
		t.Errorf("state machine tracing is off")
	}
	if lvl := dig(p, "Logging", "Level"); lvl == nil || lvl == "OFF" {
		t.Errorf("state machine logging level %v", lvl)
	}
	if dests, _ := dig(p, "Logging", "Destinations").([]any); len(dests) == 0 {
		t.Errorf("state machine logging has no destination")
	}
}

// TestDefinitionRetriesAndCatches reads the ASL: every Task state
// retries Lambda's own service errors with backoff and, but for the
// failure state itself, catches everything into the state that fails
// and refunds the task.
func TestDefinitionRetriesAndCatches(t *testing.T) {
	def := readDefinition(t)
	const refund = "RecordFailure"
	if _, ok := def.States[refund]; !ok {
		t.Fatalf("no state %s", refund)
	}
	lambdaErrors := []string{"Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException", "Lambda.TooManyRequestsException"}
	for name, s := range def.States {
		if s.Type != "Task" {
			continue
		}
		retried := map[string]bool{}
		for _, r := range s.Retry {
			for _, e := range r.ErrorEquals {
				if (e == "States.ALL" || strings.HasPrefix(e, "Lambda.")) && r.MaxAttempts > 0 && r.BackoffRate >= 1 {
					retried[e] = true
				}
			}
		}
		for _, e := range lambdaErrors {
			if !retried[e] && !retried["States.ALL"] {
				t.Errorf("%s does not retry %s", name, e)
			}
		}
		if name == refund {
			continue
		}
		caught := false
		for _, c := range s.Catch {
			if slices.Contains(c.ErrorEquals, "States.ALL") && c.Next == refund {
				caught = true
			}
		}
		if !caught {
			t.Errorf("%s does not catch States.ALL into %s", name, refund)
		}
	}
}

// definition is the part of an ASL document the checks read.
type definition struct {
	StartAt string
	States  map[string]struct {
		Type     string
		Resource string
		Retry    []struct {
			ErrorEquals     []string
			MaxAttempts     int
			BackoffRate     float64
			IntervalSeconds float64
			MaxDelaySeconds float64
			JitterStrategy  string
		}
		Catch []struct {
			ErrorEquals []string
			Next        string
		}
	}
}

func readDefinition(t *testing.T) definition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "statemachine", "generation.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d definition
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("generation.asl.json: %v", err)
	}
	return d
}

func TestOutputs(t *testing.T) {
	tp := loadTemplate(t)
	for _, name := range []string{
		"ApiUrl", "StandardUsagePlanId", "ProUsagePlanId", "TablePrefix",
		"AccountsTableName", "KeysTableName", "CountersTableName", "TasksTableName",
		"WebhooksTableName", "MediaBucketName", "StateMachineArn", "SignerSecretArn", "GenerateRoleArn",
	} {
		if _, ok := tp.Outputs[name]; !ok {
			t.Errorf("no output %s", name)
		}
	}
	for name, o := range tp.Outputs {
		if d, _ := dig(o, "Description").(string); len(d) < 10 {
			t.Errorf("output %s has no description", name)
		}
		if dig(o, "Value") == nil {
			t.Errorf("output %s has no value", name)
		}
	}
	url, err := tp.eval(dig(tp.Outputs["ApiUrl"], "Value"))
	if err != nil || !regexp.MustCompile(`^https://[^/]+\.execute-api\.us-east-1\.amazonaws\.com/[A-Za-z0-9_]+$`).MatchString(url) {
		t.Errorf("ApiUrl evaluates to %q (%v)", url, err)
	}
	prefix, err := tp.eval(dig(tp.Outputs["TablePrefix"], "Value"))
	if global, _ := tp.eval(dig(tp.Globals, "Function", "Environment", "Variables", awsstack.EnvTablePrefix)); err != nil || prefix != global {
		t.Errorf("output TablePrefix = %q (%v), want the functions' %s %q", prefix, err, awsstack.EnvTablePrefix, global)
	}
}

func TestSAMConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\[default\.deploy\.parameters\]$`),
		regexp.MustCompile(`(?m)^stack_name\s*=\s*"[A-Za-z][A-Za-z0-9-]*"$`),
		regexp.MustCompile(`(?m)^capabilities\s*=\s*"CAPABILITY_NAMED_IAM"$`),
		regexp.MustCompile(`(?m)^confirm_changeset\s*=\s*true$`),
		regexp.MustCompile(`(?m)^resolve_s3\s*=\s*true$`),
		regexp.MustCompile(`(?m)^region\s*=\s*"[a-z0-9-]+"$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("samconfig.toml has no line matching %s", want)
		}
	}
	if regexp.MustCompile(`(?m)^cached\s*=\s*true`).MatchString(text) {
		t.Errorf("samconfig.toml enables cached builds, which miss changes under shared/")
	}
}

// TestSignerSecretShape checks that the secret the stack writes decodes
// into what awsstack reads, with no field missing or misspelt.
func TestSignerSecretShape(t *testing.T) {
	tp := loadTemplate(t)
	text, err := tp.eval(tp.Resources["SignerSecret"].Properties["SecretString"])
	if err != nil {
		t.Fatalf("SignerSecret.SecretString: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var got awsstack.SignerSecret
	if err := dec.Decode(&got); err != nil {
		t.Errorf("SignerSecret %s: %v, want the shape of awsstack.SignerSecret", text, err)
	}
}

// TestCfnLint runs cfn-lint, which applies the SAM transform and checks
// the result against CloudFormation's resource specifications: property
// names and types, allowed values, runtimes. It is not installed by the
// tests (it is a Python tool); where it is missing the test is skipped.
func TestCfnLint(t *testing.T) {
	t.Parallel()
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint): skipping the CloudFormation lint")
	}
	out, err := exec.CommandContext(t.Context(), lint, "--", filepath.Join(root, "template.yaml")).CombinedOutput()
	if err != nil {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// Fault injection is never available on AWS: no function gets a
// GEN_FAULT_* variable, and no function's program contains the fault
// decorators of shared/faults, whatever its environment says.
func TestNoFaultInjectionOnAWS(t *testing.T) {
	tp := loadTemplate(t)
	fns := tp.ofType("AWS::Serverless::Function")
	if len(fns) == 0 {
		t.Fatal("no functions in template.yaml")
	}
	for _, id := range fns {
		for k := range functionEnv(t, tp, id) {
			if strings.HasPrefix(k, "GEN_FAULT_") {
				t.Errorf("%s sets %s: fault injection must never run on AWS", id, k)
			}
		}
	}

	const faultsPkg = "github.com/genvideo/gen/shared/faults"
	cmd := exec.CommandContext(t.Context(), "go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`, "./functions/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./functions/...: %v", err)
	}
	mains := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		mains++
		if slices.Contains(fields[1:], faultsPkg) {
			t.Errorf("%s imports %s", fields[0], faultsPkg)
		}
	}
	if mains < len(fns) {
		t.Errorf("go list found %d function programs, want one per function of the template (%d)", mains, len(fns))
	}
}

// Issue 34, defect 9: a function whose requests the usage plan alone
// limits (its main.go sets endpoint.GatewayLimited) writes no counter
// (functions' "status and download write nothing to DynamoDB"), so its
// role may not write the counters table; those whose every route reads
// only are listed, and each must be one.
func TestGatewayLimitedWriteNoCounter(t *testing.T) {
	tp := loadTemplate(t)
	readOnly := []string{"StatusFunction", "DownloadFunction", "OpenaiContentFunction"}
	for _, id := range readOnly {
		uri, _ := tp.Resources[id].Properties["CodeUri"].(string)
		src, err := os.ReadFile(filepath.Join(root, uri, "main.go"))
		if err != nil || !strings.Contains(string(src), "endpoint.GatewayLimited(") {
			t.Errorf("%s (%s) does not use endpoint.GatewayLimited (%v): it may write its windows", id, uri, err)
			continue
		}
		for _, line := range functionPolicies(t, tp, id) {
			action, res, _ := strings.Cut(line, " ")
			if strings.HasPrefix(res, "CountersTable") && !slices.Contains([]string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}, action) {
				t.Errorf("%s may %s, but writes no counter", id, line)
			}
		}
	}
}
