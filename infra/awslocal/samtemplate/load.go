package samtemplate

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Template is what the AWS assembly on one machine needs of template.yaml,
// with every intrinsic function resolved.
type Template struct {
	Functions    []Function
	API          API
	UsagePlans   []UsagePlan
	StateMachine StateMachine
}

// Function is one AWS::Serverless::Function.
type Function struct {
	// LogicalID is its resource name (TextToVideoFunction).
	LogicalID string
	// Dir is its CodeUri, relative to the template (functions/status).
	Dir string
	// Env is Globals' environment merged with its own.
	Env map[string]string
	// Timeout and MemorySize, Globals' unless set.
	Timeout    int
	MemorySize int
	// LoggingConfig's LogFormat and LogGroup (resolved), Globals' unless
	// set: sam local passes them to the function.
	LogFormat, LogGroup string
	// Api events (routes), Schedule events and DynamoDB events.
	Routes    []Route
	Schedules []Schedule
	Streams   []Stream
	// OtherEvents names the events of other types, which the assembly on
	// one machine does not drive (an SQS queue).
	OtherEvents []string
	// ListPrefixes are the key prefixes its role may s3:ListBucket (its
	// statements' s3:prefix conditions, "" for any key), from its Policies
	// or its Role's: S3 answers a GET of a missing key 404 to a principal
	// that may list it, 403 to one that may not.
	ListPrefixes []string
}

// Route is an Api event.
type Route struct {
	Path   string // /api/gen/status/{taskId}
	Method string // GET, or ANY
	// Authorizer is the authorizer's name, "" for none (NONE).
	Authorizer     string
	APIKeyRequired bool
	keyRequired    *bool
	// Stream says that the integration streams the response
	// (ResponseTransferMode RESPONSE_STREAM: InvokeWithResponseStream,
	// responseTransferMode STREAM).
	Stream bool
	// Timeout is the integration's (TimeoutInMillis), 0 for API
	// Gateway's default.
	Timeout time.Duration
}

// defaultAuth marks a route that names no authorizer until the API's
// default is known.
const defaultAuth = "\x00default"

// Schedule is a Schedule event: rate(5 minutes).
type Schedule struct {
	Name       string
	Expression string
}

// Stream is a DynamoDB event: the stream of a table of the template.
type Stream struct {
	Name string
	// Table is the table's name (its TableName, resolved).
	Table string
	// StartingPosition is LATEST or TRIM_HORIZON.
	StartingPosition string
	// BatchSize is the most records of one invocation (default 100).
	BatchSize int
	// MaximumRetryAttempts is how often a failed batch is retried; -1
	// (the default) until it succeeds.
	MaximumRetryAttempts int
	// Filters are FilterCriteria's patterns (JSON): a record is passed
	// when any matches, every record when there are none.
	Filters []string
}

// API is the AWS::Serverless::Api.
type API struct {
	StageName        string
	BinaryMediaTypes []string // with "~1" turned into "/"
	APIKeySource     string   // HEADER or AUTHORIZER
	// DefaultAuthorizer is the name of Authorizers' default one.
	DefaultAuthorizer string
	APIKeyRequired    bool
	Authorizers       map[string]Authorizer
	GatewayResponses  map[string]GatewayResponse
	// Method throttling (MethodSettings) by "METHOD /path", the path
	// decoded ("~1" is "/"); "*" and "/*" stand for any method and any
	// path. Each method the key matches has its own bucket, for all
	// clients together.
	MethodThrottles map[string]Throttle
}

// Throttle is a token bucket's rate (per second) and burst.
type Throttle struct {
	RateLimit  float64
	BurstLimit int
}

// Authorizer is a Lambda authorizer.
type Authorizer struct {
	// Function is the LogicalID of its function.
	Function    string
	PayloadType string   // REQUEST or TOKEN
	Headers     []string // the identity sources
	TTLSeconds  int      // ReauthorizeEvery
}

// GatewayResponse is one of the API's own answers.
type GatewayResponse struct {
	StatusCode int // 0: the response type's default
	Headers    map[string]string
	Templates  map[string]string // by content type
}

// UsagePlan is an AWS::ApiGateway::UsagePlan.
type UsagePlan struct {
	LogicalID   string
	Name        string
	RateLimit   float64
	BurstLimit  int
	QuotaLimit  int
	QuotaPeriod string
}

// StateMachine is the AWS::Serverless::StateMachine.
type StateMachine struct {
	LogicalID     string
	DefinitionURI string
	// Substitutions with each function ARN resolved.
	Substitutions map[string]string
}

// Names says what the template's resources are called once "deployed"
// on one machine.
type Names struct {
	StackName string
	Region    string
	Account   string
	// Refs overrides !Ref of a resource or parameter (MediaBucket: the
	// bucket's name, SignerSecret: its ARN).
	Refs map[string]string
	// Parameters overrides parameter defaults.
	Parameters map[string]string
	// SAMLocal resolves as `sam local invoke` does (SAMLocalNames), not
	// as a deployed stack: see samlocal.go.
	SAMLocal bool
}

// FunctionARN is the ARN the assembly gives a function.
func (n Names) FunctionARN(logicalID string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s-%s", n.Region, n.Account, n.StackName, logicalID)
}

// StateMachineARN is the ARN the assembly gives a state machine.
func (n Names) StateMachineARN(logicalID string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s-%s", n.Region, n.Account, n.StackName, logicalID)
}

// Load reads and resolves the template at file.
func Load(file string, names Names) (*Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	doc, err := ParseYAML(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	r := &resolver{names: names, params: map[string]string{}, resources: m(doc["Resources"])}
	for name, p := range m(doc["Parameters"]) {
		if d, ok := m(p)["Default"]; ok {
			r.params[name] = fmt.Sprint(d)
		}
	}
	for k, v := range names.Parameters {
		r.params[k] = v
	}
	r.conditions = m(doc["Conditions"])

	tp := &Template{}
	glob := m(m(doc["Globals"])["Function"])
	globEnv := m(m(glob["Environment"])["Variables"])
	ids := make([]string, 0, len(r.resources))
	for id := range r.resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		res := m(r.resources[id])
		if c, ok := res["Condition"].(string); ok {
			if on, err := r.condition(c); err != nil || !on {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		props := m(res["Properties"])
		switch res["Type"] {
		case "AWS::Serverless::Function":
			f := Function{LogicalID: id, Env: map[string]string{}, Timeout: 3, MemorySize: 128}
			f.Dir, _ = props["CodeUri"].(string)
			for _, src := range []map[string]any{glob, props} {
				// Through the resolver: a size may be an !If on a parameter.
				if v, ok := src["Timeout"]; ok {
					t, _ := r.str(v)
					f.Timeout, _ = strconv.Atoi(t)
				}
				if v, ok := src["MemorySize"]; ok {
					mem, _ := r.str(v)
					f.MemorySize, _ = strconv.Atoi(mem)
				}
				if lc := m(src["LoggingConfig"]); lc != nil {
					if v, ok := lc["LogFormat"]; ok {
						f.LogFormat = r.must(v)
					}
					if v, ok := lc["LogGroup"]; ok {
						f.LogGroup = r.must(v)
					}
				}
			}
			for _, vars := range []map[string]any{globEnv, m(m(props["Environment"])["Variables"])} {
				for k, v := range vars {
					s, err := r.str(v)
					if err != nil && r.names.SAMLocal {
						// SAM leaves what it cannot resolve as it was,
						// and passes an intrinsic left over as "".
						s, err = "", nil
					}
					if err != nil {
						return nil, fmt.Errorf("%s: environment %s: %w", id, k, err)
					}
					f.Env[k] = s
				}
			}
			for name, ev := range m(props["Events"]) {
				ep := m(m(ev)["Properties"])
				switch m(ev)["Type"] {
				case "Api":
					rt := Route{Path: fmt.Sprint(ep["Path"]), Method: strings.ToUpper(fmt.Sprint(ep["Method"])), Authorizer: defaultAuth}
					a := m(ep["Auth"])
					if v, ok := a["Authorizer"]; ok {
						rt.Authorizer = fmt.Sprint(v)
					}
					if v, ok := a["ApiKeyRequired"].(bool); ok {
						rt.keyRequired = &v
					}
					rt.Stream = ep["ResponseTransferMode"] == "RESPONSE_STREAM"
					if v, ok := ep["TimeoutInMillis"].(int); ok {
						rt.Timeout = time.Duration(v) * time.Millisecond
					}
					f.Routes = append(f.Routes, rt)
				case "Schedule":
					expr, err := r.str(ep["Schedule"])
					if err != nil {
						return nil, fmt.Errorf("%s: schedule %s: %w", id, name, err)
					}
					f.Schedules = append(f.Schedules, Schedule{Name: name, Expression: expr})
				case "DynamoDB":
					st, err := r.stream(name, ep)
					if err != nil {
						return nil, fmt.Errorf("%s: event %s: %w", id, name, err)
					}
					f.Streams = append(f.Streams, st)
				default:
					f.OtherEvents = append(f.OtherEvents, fmt.Sprintf("%s (%v)", name, m(ev)["Type"]))
				}
			}
			sort.Slice(f.Routes, func(i, j int) bool { return f.Routes[i].Path+f.Routes[i].Method < f.Routes[j].Path+f.Routes[j].Method })
			f.ListPrefixes = r.listPrefixes(props)
			tp.Functions = append(tp.Functions, f)
		case "AWS::Serverless::Api":
			api, err := r.api(props)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			tp.API = api
		case "AWS::ApiGateway::UsagePlan":
			up := UsagePlan{LogicalID: id}
			var err error
			if up.Name, err = r.str(props["UsagePlanName"]); err != nil {
				return nil, err
			}
			th, q := m(props["Throttle"]), m(props["Quota"])
			up.RateLimit, _ = strconv.ParseFloat(r.must(th["RateLimit"]), 64)
			up.BurstLimit, _ = strconv.Atoi(r.must(th["BurstLimit"]))
			up.QuotaLimit, _ = strconv.Atoi(r.must(q["Limit"]))
			up.QuotaPeriod = r.must(q["Period"])
			tp.UsagePlans = append(tp.UsagePlans, up)
		case "AWS::Serverless::StateMachine":
			sm := StateMachine{LogicalID: id, Substitutions: map[string]string{}}
			sm.DefinitionURI, _ = props["DefinitionUri"].(string)
			for k, v := range m(props["DefinitionSubstitutions"]) {
				s, err := r.str(v)
				if err != nil {
					return nil, fmt.Errorf("%s: substitution %s: %w", id, k, err)
				}
				sm.Substitutions[k] = s
			}
			tp.StateMachine = sm
		}
	}
	// Routes take the API's defaults.
	for i := range tp.Functions {
		for j := range tp.Functions[i].Routes {
			rt := &tp.Functions[i].Routes[j]
			switch rt.Authorizer {
			case defaultAuth:
				rt.Authorizer = tp.API.DefaultAuthorizer
			case "NONE":
				rt.Authorizer = ""
			}
			rt.APIKeyRequired = tp.API.APIKeyRequired
			if rt.keyRequired != nil {
				rt.APIKeyRequired = *rt.keyRequired
			}
		}
	}
	// Paths in the template are relative to it.
	dir := path.Dir(file)
	for i := range tp.Functions {
		if tp.Functions[i].Dir != "" && dir != "." {
			tp.Functions[i].Dir = path.Join(dir, tp.Functions[i].Dir)
		}
	}
	if tp.StateMachine.DefinitionURI != "" && dir != "." {
		tp.StateMachine.DefinitionURI = path.Join(dir, tp.StateMachine.DefinitionURI)
	}
	return tp, nil
}

func (r *resolver) api(props map[string]any) (API, error) {
	api := API{Authorizers: map[string]Authorizer{}, GatewayResponses: map[string]GatewayResponse{}, APIKeySource: "HEADER"}
	var err error
	if api.StageName, err = r.str(props["StageName"]); err != nil {
		return api, err
	}
	for _, t := range list(props["BinaryMediaTypes"]) {
		api.BinaryMediaTypes = append(api.BinaryMediaTypes, strings.ReplaceAll(fmt.Sprint(t), "~1", "/"))
	}
	if v, ok := props["ApiKeySourceType"]; ok {
		api.APIKeySource = r.must(v)
	}
	for _, ms := range list(props["MethodSettings"]) {
		s := m(ms)
		if s["ThrottlingRateLimit"] == nil {
			continue
		}
		var th Throttle
		th.RateLimit, _ = strconv.ParseFloat(r.must(s["ThrottlingRateLimit"]), 64)
		th.BurstLimit, _ = strconv.Atoi(r.must(s["ThrottlingBurstLimit"]))
		path := fmt.Sprint(s["ResourcePath"])
		if path != "/" && path != "/*" {
			path = strings.ReplaceAll(path, "~1", "/")[1:]
		}
		if api.MethodThrottles == nil {
			api.MethodThrottles = map[string]Throttle{}
		}
		api.MethodThrottles[fmt.Sprint(s["HttpMethod"])+" "+path] = th
	}
	auth := m(props["Auth"])
	api.DefaultAuthorizer, _ = auth["DefaultAuthorizer"].(string)
	api.APIKeyRequired, _ = auth["ApiKeyRequired"].(bool)
	for name, a := range m(auth["Authorizers"]) {
		am := m(a)
		au := Authorizer{PayloadType: "TOKEN", TTLSeconds: 300}
		if v, ok := am["FunctionPayloadType"]; ok {
			au.PayloadType = fmt.Sprint(v)
		}
		// FunctionArn: !GetAtt X.Arn names the function.
		if ga, ok := m(am["FunctionArn"])["Fn::GetAtt"]; ok {
			au.Function = fmt.Sprint(list(ga)[0])
		}
		id := m(am["Identity"])
		for _, h := range list(id["Headers"]) {
			au.Headers = append(au.Headers, fmt.Sprint(h))
		}
		if h, ok := id["Header"]; ok {
			au.Headers = append(au.Headers, fmt.Sprint(h))
		}
		if au.PayloadType == "TOKEN" && len(au.Headers) == 0 {
			au.Headers = []string{"Authorization"}
		}
		if v, ok := id["ReauthorizeEvery"]; ok {
			au.TTLSeconds, _ = strconv.Atoi(r.must(v))
		}
		api.Authorizers[name] = au
	}
	for typ, g := range m(props["GatewayResponses"]) {
		gm := m(g)
		gr := GatewayResponse{Headers: map[string]string{}, Templates: map[string]string{}}
		if v, ok := gm["StatusCode"]; ok {
			gr.StatusCode, _ = strconv.Atoi(r.must(v))
		}
		for k, v := range m(m(gm["ResponseParameters"])["Headers"]) {
			gr.Headers[k] = strings.Trim(r.must(v), "'")
		}
		for ct, v := range m(gm["ResponseTemplates"]) {
			s, err := r.str(v)
			if err != nil {
				return api, fmt.Errorf("gateway response %s: %w", typ, err)
			}
			gr.Templates[ct] = s
		}
		api.GatewayResponses[typ] = gr
	}
	return api, nil
}

// resolver evaluates intrinsic functions.
type resolver struct {
	names      Names
	params     map[string]string
	conditions map[string]any
	resources  map[string]any
}

func (r *resolver) must(v any) string {
	s, err := r.str(v)
	if err != nil {
		return ""
	}
	return s
}

func (r *resolver) ref(name string) (string, error) {
	if r.names.SAMLocal {
		return r.samRef(name)
	}
	if v, ok := r.names.Refs[name]; ok {
		return v, nil
	}
	if v, ok := r.params[name]; ok {
		return v, nil
	}
	switch name {
	case "AWS::StackName":
		return r.names.StackName, nil
	case "AWS::Region":
		return r.names.Region, nil
	case "AWS::AccountId":
		return r.names.Account, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	case "AWS::NoValue":
		return "", nil
	}
	res, ok := r.resources[name]
	if !ok {
		return "", fmt.Errorf("!Ref %s: no such parameter or resource", name)
	}
	switch m(res)["Type"] {
	case "AWS::Serverless::Function":
		return r.names.StackName + "-" + name, nil
	case "AWS::Serverless::StateMachine":
		return r.names.StateMachineARN(name), nil
	}
	return r.names.StackName + "-" + name, nil
}

// stream reads a DynamoDB event, whose Stream is !GetAtt <table>.StreamArn
// of a table of the template.
func (r *resolver) stream(name string, ep map[string]any) (Stream, error) {
	st := Stream{Name: name, BatchSize: 100, MaximumRetryAttempts: -1}
	ga := list(m(ep["Stream"])["Fn::GetAtt"])
	if len(ga) != 2 || fmt.Sprint(ga[1]) != "StreamArn" {
		return st, fmt.Errorf("Stream must be !GetAtt <table>.StreamArn, not %v", ep["Stream"])
	}
	table := m(r.resources[fmt.Sprint(ga[0])])
	if table["Type"] != "AWS::DynamoDB::Table" {
		return st, fmt.Errorf("stream of %v: not a table of the template", ga[0])
	}
	var err error
	if st.Table, err = r.str(m(table["Properties"])["TableName"]); err != nil || st.Table == "" {
		return st, fmt.Errorf("stream of %v: table name: %v", ga[0], err)
	}
	if m(m(table["Properties"])["StreamSpecification"])["StreamViewType"] == nil {
		return st, fmt.Errorf("table %v has no StreamSpecification", ga[0])
	}
	if st.StartingPosition, err = r.str(ep["StartingPosition"]); err != nil {
		return st, err
	}
	if st.StartingPosition != "LATEST" && st.StartingPosition != "TRIM_HORIZON" {
		return st, fmt.Errorf("StartingPosition %q: LATEST or TRIM_HORIZON", st.StartingPosition)
	}
	for key, dst := range map[string]*int{"BatchSize": &st.BatchSize, "MaximumRetryAttempts": &st.MaximumRetryAttempts} {
		if v, ok := ep[key]; ok {
			if *dst, err = strconv.Atoi(r.must(v)); err != nil {
				return st, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	for _, f := range list(m(ep["FilterCriteria"])["Filters"]) {
		p, err := r.str(m(f)["Pattern"])
		if err != nil {
			return st, fmt.Errorf("filter: %w", err)
		}
		st.Filters = append(st.Filters, p)
	}
	return st, nil
}

func (r *resolver) getAtt(res, attr string) (string, error) {
	if r.names.SAMLocal {
		return r.samGetAtt(res, attr)
	}
	rm, ok := r.resources[res]
	if !ok {
		return "", fmt.Errorf("!GetAtt %s.%s: no such resource", res, attr)
	}
	switch m(rm)["Type"] {
	case "AWS::Serverless::Function":
		if attr == "Arn" {
			return r.names.FunctionARN(res), nil
		}
	case "AWS::Serverless::StateMachine":
		if attr == "Name" {
			return r.names.StackName + "-" + res, nil
		}
	}
	return fmt.Sprintf("arn:aws:local:%s:%s:%s/%s", r.names.Region, r.names.Account, res, attr), nil
}

var subVar = regexp.MustCompile(`\$\{([^}!]+)\}`)

// str resolves v to a string.
func (r *resolver) str(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int, float64, bool:
		return fmt.Sprint(x), nil
	case map[string]any:
		for fn, arg := range x {
			switch fn {
			case "Ref":
				return r.ref(fmt.Sprint(arg))
			case "Fn::GetAtt":
				l := list(arg)
				if len(l) != 2 {
					return "", fmt.Errorf("!GetAtt %v", arg)
				}
				return r.getAtt(fmt.Sprint(l[0]), fmt.Sprint(l[1]))
			case "Fn::Sub":
				s, ok := arg.(string)
				if !ok {
					return "", fmt.Errorf("!Sub with variables is not supported")
				}
				var err error
				out := subVar.ReplaceAllStringFunc(s, func(tok string) string {
					name := tok[2 : len(tok)-1]
					var v string
					var e error
					if res, attr, ok := strings.Cut(name, "."); ok {
						v, e = r.getAtt(res, attr)
					} else {
						v, e = r.ref(name)
					}
					if e != nil {
						err = e
					}
					return v
				})
				return out, err
			case "Fn::If":
				l := list(arg)
				if len(l) != 3 {
					return "", fmt.Errorf("!If %v", arg)
				}
				on, err := r.condition(fmt.Sprint(l[0]))
				if err != nil {
					return "", err
				}
				if on {
					return r.str(l[1])
				}
				return r.str(l[2])
			}
			return "", fmt.Errorf("intrinsic %s is not supported here", fn)
		}
	}
	return "", fmt.Errorf("cannot make a string of %T", v)
}

func (r *resolver) condition(name string) (bool, error) {
	c, ok := r.conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	return r.boolean(c)
}

func (r *resolver) boolean(v any) (bool, error) {
	x := m(v)
	for fn, arg := range x {
		l := list(arg)
		switch fn {
		case "Fn::Equals":
			a, err := r.str(l[0])
			if err != nil {
				return false, err
			}
			b, err := r.str(l[1])
			return a == b, err
		case "Fn::Not":
			b, err := r.boolean(l[0])
			return !b, err
		case "Condition":
			return r.condition(fmt.Sprint(arg))
		}
		return false, fmt.Errorf("condition function %s is not supported", fn)
	}
	return false, fmt.Errorf("condition %v", v)
}

func m(v any) map[string]any {
	x, _ := v.(map[string]any)
	return x
}

func list(v any) []any {
	x, _ := v.([]any)
	return x
}

// listPrefixes reads the s3:ListBucket grants of a function: its
// Policies' statements, or those of its Role when that is a role of the
// template (Fn::GetAtt <role>.Arn).
func (r *resolver) listPrefixes(props map[string]any) []string {
	var stmts []any
	for _, p := range list(props["Policies"]) {
		stmts = append(stmts, list(m(p)["Statement"])...)
	}
	if ga, ok := m(props["Role"])["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		for _, p := range list(m(m(r.resources[fmt.Sprint(ga[0])])["Properties"])["Policies"]) {
			stmts = append(stmts, list(m(m(p)["PolicyDocument"])["Statement"])...)
		}
	}
	var out []string
	for _, st := range stmts {
		sm := m(st)
		actions := list(sm["Action"])
		if a, ok := sm["Action"].(string); ok {
			actions = []any{a}
		}
		if sm["Effect"] != "Allow" || !slices.ContainsFunc(actions, func(a any) bool { return a == "s3:ListBucket" }) {
			continue
		}
		cond, ok := m(m(sm["Condition"])["StringLike"])["s3:prefix"]
		if !ok {
			out = append(out, "")
			continue
		}
		prefixes := list(cond)
		if p, ok := cond.(string); ok {
			prefixes = []any{p}
		}
		for _, p := range prefixes {
			out = append(out, strings.TrimSuffix(fmt.Sprint(p), "*"))
		}
	}
	return out
}
