package deploy

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/genvideo/gen/infra/awslocal/samtemplate"
)

// parseYAML decodes a CloudFormation YAML document into maps, slices and
// scalars, with every intrinsic function in long form (samtemplate).
func parseYAML(data []byte) (map[string]any, error) { return samtemplate.ParseYAML(data) }

// template is a parsed SAM template.
type template struct {
	Globals    map[string]any
	Parameters map[string]any
	Conditions map[string]any
	Resources  map[string]resource
	Outputs    map[string]any
	raw        map[string]any
}

// resource is one entry of Resources.
type resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
	raw        map[string]any
}

func readTemplate(path string) (*template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err := parseYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tp := &template{
		Globals:    mapAt(raw, "Globals"),
		Parameters: mapAt(raw, "Parameters"),
		Conditions: mapAt(raw, "Conditions"),
		Outputs:    mapAt(raw, "Outputs"),
		Resources:  map[string]resource{},
		raw:        raw,
	}
	for id, v := range mapAt(raw, "Resources") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: resource %s is not a mapping", path, id)
		}
		typ, _ := m["Type"].(string)
		tp.Resources[id] = resource{Type: typ, Properties: mapAt(m, "Properties"), Metadata: mapAt(m, "Metadata"), raw: m}
	}
	return tp, nil
}

// mapAt returns m[key] as a mapping, or an empty one.
func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

// dig follows a path of mapping keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// ofType lists the logical ids of the resources of a type, sorted.
func (tp *template) ofType(typ string) []string {
	var ids []string
	for id, r := range tp.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// pseudoParameters are CloudFormation's own parameters.
var pseudoParameters = []string{
	"AWS::AccountId", "AWS::NotificationARNs", "AWS::NoValue", "AWS::Partition",
	"AWS::Region", "AWS::StackId", "AWS::StackName", "AWS::URLSuffix",
}

// getAttributes lists, per resource type the template uses, the
// attributes Fn::GetAtt may read. A type missing here fails the check, so
// that a new type is looked up rather than trusted.
var getAttributes = map[string][]string{
	"AWS::Serverless::Function":     {"Arn"},
	"AWS::Serverless::StateMachine": {"Arn", "Name"},
	"AWS::Serverless::Api":          {"RootResourceId"},
	"AWS::DynamoDB::Table":          {"Arn", "StreamArn"},
	"AWS::S3::Bucket":               {"Arn", "DomainName", "RegionalDomainName", "WebsiteURL"},
	"AWS::IAM::Role":                {"Arn", "RoleId"},
	"AWS::IAM::User":                {"Arn"},
	"AWS::IAM::AccessKey":           {"SecretAccessKey"},
	"AWS::Logs::LogGroup":           {"Arn"},
	"AWS::SecretsManager::Secret":   {"Id"},
	"AWS::WAFv2::WebACL":            {"Arn", "Capacity", "Id", "LabelNamespace"},
	"AWS::ApiGateway::UsagePlan":    {"Id"},
}

// names are what a template's references may name.
type names struct {
	refs       map[string]bool   // Ref targets: parameters, resources, pseudo parameters, SAM's
	types      map[string]string // logical id -> type, for GetAtt (SAM-generated ones included)
	conditions map[string]bool
}

// names collects what references may name, including the resources and
// properties SAM generates and lets templates refer to: <Function>Role and
// <StateMachine>Role when no Role is given, <Api>.Stage and
// <Api>.Deployment, <Function>.Alias and .Version with AutoPublishAlias,
// and ServerlessRestApi when a function has an Api event of no RestApiId.
func (tp *template) names() names {
	n := names{refs: map[string]bool{}, types: map[string]string{}, conditions: map[string]bool{}}
	for _, p := range pseudoParameters {
		n.refs[p] = true
	}
	for id := range tp.Parameters {
		n.refs[id] = true
	}
	for id := range tp.Conditions {
		n.conditions[id] = true
	}
	for id, r := range tp.Resources {
		n.refs[id] = true
		n.types[id] = r.Type
		switch r.Type {
		case "AWS::Serverless::Function":
			if _, ok := r.Properties["Role"]; !ok {
				n.refs[id+"Role"] = true
				n.types[id+"Role"] = "AWS::IAM::Role"
			}
			if _, ok := r.Properties["AutoPublishAlias"]; ok {
				n.refs[id+".Alias"], n.refs[id+".Version"] = true, true
			}
			for _, ev := range mapAt(r.Properties, "Events") {
				if dig(ev, "Type") == "Api" && dig(ev, "Properties", "RestApiId") == nil {
					n.refs["ServerlessRestApi"] = true
					n.types["ServerlessRestApi"] = "AWS::Serverless::Api"
				}
			}
		case "AWS::Serverless::StateMachine":
			if _, ok := r.Properties["Role"]; !ok {
				n.refs[id+"Role"] = true
				n.types[id+"Role"] = "AWS::IAM::Role"
			}
		case "AWS::Serverless::Api":
			n.refs[id+".Stage"], n.refs[id+".Deployment"] = true, true
		}
	}
	return n
}

// subVariable matches ${Name} in an Fn::Sub string; ${!Literal} is
// excluded by the caller.
var subVariable = regexp.MustCompile(`\$\{([^}]*)\}`)

// referenceProblems checks every Ref, Fn::GetAtt, Fn::Sub variable,
// condition and DependsOn of the template, and reports each one that
// names nothing, with where it is. used collects what was referenced.
func (tp *template) referenceProblems() (problems []string, used map[string]bool) {
	n := tp.names()
	used = map[string]bool{}
	report := func(path, format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	checkGetAtt := func(path, res, attr string) {
		used[res] = true
		typ, ok := n.types[res]
		if !ok {
			report(path, "GetAtt %s.%s: no resource %s", res, attr, res)
			return
		}
		attrs, known := getAttributes[typ]
		if !known {
			report(path, "GetAtt %s.%s: add the attributes of %s to getAttributes", res, attr, typ)
			return
		}
		if !slices.Contains(attrs, attr) {
			report(path, "GetAtt %s.%s: %s has no attribute %s (it has %v)", res, attr, typ, attr, attrs)
		}
	}
	checkRef := func(path, name string) {
		used[name] = true
		if !n.refs[name] {
			report(path, "Ref %s names no parameter, resource or pseudo parameter", name)
		}
	}
	checkCondition := func(path, name string) {
		used[name] = true
		if !n.conditions[name] {
			report(path, "condition %s is not defined in Conditions", name)
		}
	}
	checkSub := func(path string, s string, locals map[string]any) {
		for _, m := range subVariable.FindAllStringSubmatch(s, -1) {
			name := strings.TrimSpace(m[1])
			switch {
			case strings.HasPrefix(name, "!"): // ${!Literal}
			case locals[name] != nil:
			case strings.HasPrefix(name, "AWS::"):
				checkRef(path, name)
			case strings.Contains(name, "."):
				res, attr, _ := strings.Cut(name, ".")
				if n.refs[name] { // <Api>.Stage and the like
					used[name] = true
					continue
				}
				checkGetAtt(path, res, attr)
			default:
				checkRef(path, name)
			}
		}
	}

	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case []any:
			for i, e := range v {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		case map[string]any:
			if len(v) == 1 {
				for k, arg := range v {
					switch k {
					case "Ref":
						if s, ok := arg.(string); ok {
							checkRef(path, s)
							return
						}
						report(path, "Ref of a %T", arg)
						return
					case "Condition":
						if s, ok := arg.(string); ok {
							checkCondition(path, s)
							return
						}
					case "Fn::GetAtt":
						parts, _ := arg.([]any)
						if len(parts) != 2 {
							report(path, "GetAtt needs [resource, attribute], got %v", arg)
							return
						}
						res, _ := parts[0].(string)
						attr, ok := parts[1].(string)
						if !ok {
							walk(path+".Fn::GetAtt[1]", parts[1])
							attr = "?"
						}
						checkGetAtt(path, res, attr)
						return
					case "Fn::Sub":
						switch arg := arg.(type) {
						case string:
							checkSub(path, arg, nil)
						case []any:
							if len(arg) != 2 {
								report(path, "Sub needs [string, variables], got %d items", len(arg))
								return
							}
							locals, _ := arg[1].(map[string]any)
							if s, ok := arg[0].(string); ok {
								checkSub(path, s, locals)
							} else {
								report(path, "the string of a Sub is a %T", arg[0])
							}
							walk(path+".Fn::Sub[1]", arg[1])
						default:
							report(path, "Sub of a %T", arg)
						}
						return
					case "Fn::If":
						parts, _ := arg.([]any)
						if len(parts) != 3 {
							report(path, "If needs [condition, then, else], got %v", arg)
							return
						}
						if s, ok := parts[0].(string); ok {
							checkCondition(path, s)
						} else {
							report(path, "the condition of an If is a %T", parts[0])
						}
						walk(path+".Fn::If[1]", parts[1])
						walk(path+".Fn::If[2]", parts[2])
						return
					}
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(path+"."+k, v[k])
			}
		}
	}

	for _, section := range []string{"Globals", "Conditions", "Outputs"} {
		walk(section, tp.raw[section])
	}
	// Parameters hold no references, but their defaults are walked so that
	// a tag there is noticed too.
	walk("Parameters", tp.raw["Parameters"])
	ids := make([]string, 0, len(tp.Resources))
	for id := range tp.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := tp.Resources[id]
		path := "Resources." + id
		if r.Type == "" {
			report(path, "no Type")
		}
		if c, ok := r.raw["Condition"]; ok {
			if s, ok := c.(string); ok {
				checkCondition(path+".Condition", s)
			} else {
				report(path+".Condition", "a %T, not a condition name", c)
			}
		}
		var deps []any
		switch d := r.raw["DependsOn"].(type) {
		case string:
			deps = []any{d}
		case []any:
			deps = d
		}
		for _, d := range deps {
			s, _ := d.(string)
			if _, ok := tp.Resources[s]; !ok {
				report(path+".DependsOn", "%v is not a resource", d)
			}
			used[s] = true
		}
		walk(path+".Properties", r.raw["Properties"])
		walk(path+".Metadata", r.raw["Metadata"])
	}
	for id, o := range tp.Outputs {
		if s, ok := dig(o, "Condition").(string); ok {
			checkCondition("Outputs."+id+".Condition", s)
		}
	}
	sort.Strings(problems)
	return problems, used
}

// Evaluation of the template's values as CloudFormation would on a
// deployment with default parameters, for the checks that need the
// values themselves (table names, environment variables, response
// bodies). Resources evaluate to plausible physical ids or ARNs.

const (
	testStack   = "gen-test"
	testRegion  = "us-east-1"
	testAccount = "123456789012"
)

// physicalRef is what Ref returns for a resource of each type the
// evaluation meets.
func (tp *template) physicalRef(id string) (string, error) {
	r, ok := tp.Resources[id]
	if !ok {
		if strings.HasSuffix(id, ".Stage") {
			return "v1", nil
		}
		return "", fmt.Errorf("Ref %s: no such resource", id)
	}
	switch r.Type {
	case "AWS::Serverless::StateMachine":
		return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s-%s", testRegion, testAccount, id, "Ab12Cd34"), nil
	case "AWS::SecretsManager::Secret":
		return fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-AbCdEf", testRegion, testAccount, id), nil
	case "AWS::S3::Bucket":
		return strings.ToLower(testStack + "-" + id + "-1a2b3c4d5e6f"), nil
	case "AWS::DynamoDB::Table", "AWS::Logs::LogGroup":
		for _, p := range []string{"TableName", "LogGroupName"} {
			if v, ok := r.Properties[p]; ok {
				return tp.eval(v)
			}
		}
		return testStack + "-" + id + "-1A2B3C", nil
	case "AWS::Serverless::Function":
		return testStack + "-" + id + "-1A2B3C", nil
	default:
		return id + "-1a2b3c", nil
	}
}

// getAtt is what Fn::GetAtt returns, for the attributes the evaluation
// meets.
func (tp *template) getAtt(id, attr string) (string, error) {
	r, ok := tp.Resources[id]
	if !ok {
		return "", fmt.Errorf("GetAtt %s.%s: no such resource", id, attr)
	}
	ref, err := tp.physicalRef(id)
	if err != nil {
		return "", err
	}
	switch {
	case r.Type == "AWS::Serverless::Function" && attr == "Arn":
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", testRegion, testAccount, ref), nil
	case r.Type == "AWS::Serverless::StateMachine" && attr == "Name":
		return ref[strings.LastIndex(ref, ":")+1:], nil
	case r.Type == "AWS::S3::Bucket" && attr == "Arn":
		return "arn:aws:s3:::" + ref, nil
	case r.Type == "AWS::DynamoDB::Table" && attr == "Arn":
		return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", testRegion, testAccount, ref), nil
	case r.Type == "AWS::Logs::LogGroup" && attr == "Arn":
		return fmt.Sprintf("arn:aws:logs:%s:%s:log-group:%s:*", testRegion, testAccount, ref), nil
	case r.Type == "AWS::IAM::AccessKey" && attr == "SecretAccessKey":
		return "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", nil
	}
	return "", fmt.Errorf("GetAtt %s.%s: the evaluation does not know this attribute of %s", id, attr, r.Type)
}

// eval evaluates a value to a string with default parameters.
func (tp *template) eval(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int:
		return strconv.Itoa(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case map[string]any:
		if len(v) != 1 {
			return "", fmt.Errorf("a mapping of %d keys is not a scalar", len(v))
		}
		for k, arg := range v {
			switch k {
			case "Ref":
				return tp.evalRef(arg.(string))
			case "Fn::GetAtt":
				parts := arg.([]any)
				return tp.getAtt(parts[0].(string), parts[1].(string))
			case "Fn::Sub":
				s, locals := "", map[string]any{}
				switch arg := arg.(type) {
				case string:
					s = arg
				case []any:
					s, _ = arg[0].(string)
					locals, _ = arg[1].(map[string]any)
				}
				var firstErr error
				out := subVariable.ReplaceAllStringFunc(s, func(m string) string {
					name := strings.TrimSpace(m[2 : len(m)-1])
					if strings.HasPrefix(name, "!") {
						return "${" + name[1:] + "}"
					}
					var val string
					var err error
					if lv, ok := locals[name]; ok {
						val, err = tp.eval(lv)
					} else if res, attr, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, "AWS::") && !strings.HasSuffix(name, ".Stage") {
						val, err = tp.getAtt(res, attr)
					} else {
						val, err = tp.evalRef(name)
					}
					if err != nil && firstErr == nil {
						firstErr = err
					}
					return val
				})
				return out, firstErr
			case "Fn::If":
				parts := arg.([]any)
				ok, err := tp.condition(parts[0].(string))
				if err != nil {
					return "", err
				}
				if ok {
					return tp.eval(parts[1])
				}
				return tp.eval(parts[2])
			}
			return "", fmt.Errorf("the evaluation does not support %s", k)
		}
	}
	return "", fmt.Errorf("cannot evaluate a %T", v)
}

func (tp *template) evalRef(name string) (string, error) {
	switch name {
	case "AWS::StackName":
		return testStack, nil
	case "AWS::Region":
		return testRegion, nil
	case "AWS::AccountId":
		return testAccount, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "amazonaws.com", nil
	}
	if p, ok := tp.Parameters[name]; ok {
		d, ok := dig(p, "Default").(any)
		if !ok || d == nil {
			return "", fmt.Errorf("parameter %s has no default", name)
		}
		return tp.eval(d)
	}
	return tp.physicalRef(name)
}

// condition evaluates a condition of Conditions with default parameters.
func (tp *template) condition(name string) (bool, error) {
	c, ok := tp.Conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	return tp.evalCondition(c)
}

func (tp *template) evalCondition(c any) (bool, error) {
	m, ok := c.(map[string]any)
	if !ok || len(m) != 1 {
		return false, fmt.Errorf("a condition must be one function, got %v", c)
	}
	for k, arg := range m {
		args, _ := arg.([]any)
		switch k {
		case "Condition":
			return tp.condition(arg.(string))
		case "Fn::Equals":
			a, err := tp.eval(args[0])
			if err != nil {
				return false, err
			}
			b, err := tp.eval(args[1])
			return a == b, err
		case "Fn::Not":
			v, err := tp.evalCondition(args[0])
			return !v, err
		case "Fn::EachMemberEquals": // of Rules only; a list parameter evaluates to its text
			list, err := tp.eval(args[0])
			if err != nil {
				return false, err
			}
			v, err := tp.eval(args[1])
			if err != nil {
				return false, err
			}
			for _, item := range strings.Split(list, ",") {
				if strings.TrimSpace(item) != v {
					return false, nil
				}
			}
			return true, nil
		case "Fn::Contains": // of Rules only
			list, _ := args[0].([]any)
			v, err := tp.eval(args[1])
			if err != nil {
				return false, err
			}
			for _, item := range list {
				if s, err := tp.eval(item); err != nil || s == v {
					return err == nil, err
				}
			}
			return false, nil
		case "Fn::And", "Fn::Or":
			and := k == "Fn::And"
			for _, a := range args {
				v, err := tp.evalCondition(a)
				if err != nil {
					return false, err
				}
				if v != and {
					return v, nil
				}
			}
			return and, nil
		}
		return false, fmt.Errorf("the evaluation does not support %s in a condition", k)
	}
	return false, nil
}
