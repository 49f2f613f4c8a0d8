package samtemplate

import "fmt"

// What `sam local invoke` resolves a template's intrinsic functions to,
// read in the SAM CLI's source (github.com/aws/aws-sam-cli at
// fe8f8dbb1160abce8ae13e0a4c5f8b456658afd3; those files last changed in
// 2f93a01c, 2026-04-02; read 2026-07):
//
//   - samcli/lib/intrinsic_resolver/intrinsics_symbol_table.py,
//     DEFAULT_PSEUDO_PARAM_VALUES: AWS::StackName is "local",
//     AWS::AccountId "123456789012", AWS::Region "us-east-1" (unless
//     --region), AWS::Partition "aws", AWS::URLSuffix "localhost";
//   - the same file, resolve_symbols: a parameter is its override or
//     Default; !Ref of a resource is its logical id (the common "Ref"
//     attribute resolver), !GetAtt X.Arn is
//     arn:aws:lambda:us-east-1:123456789012:function:X whatever X is
//     (arn_resolver's default service), and any other attribute cannot be
//     resolved;
//   - samcli/lib/providers/sam_base_provider.py, get_template: resolution
//     ignores errors and leaves what it cannot resolve as it was, and
//     samcli/local/lambdafn/env_vars.py, _stringify_value, passes such a
//     leftover intrinsic to the function as "".
//
// So GEN_STATE_MACHINE_ARN is "GenerationStateMachine", not an ARN, and
// GEN_TABLE_PREFIX is "local-": what env.json must replace.
const (
	SAMLocalStackName = "local"
	SAMLocalRegion    = "us-east-1"
	SAMLocalAccount   = "123456789012"
)

// SAMLocalNames are the Names under which Load resolves as sam local does;
// parameters are its --parameter-overrides.
func SAMLocalNames(parameters map[string]string) Names {
	return Names{StackName: SAMLocalStackName, Region: SAMLocalRegion, Account: SAMLocalAccount,
		Parameters: parameters, SAMLocal: true}
}

func (r *resolver) samRef(name string) (string, error) {
	if v, ok := r.params[name]; ok {
		return v, nil
	}
	switch name {
	case "AWS::StackName":
		return SAMLocalStackName, nil
	case "AWS::Region":
		return r.names.Region, nil
	case "AWS::AccountId":
		return SAMLocalAccount, nil
	case "AWS::Partition":
		return "aws", nil
	case "AWS::URLSuffix":
		return "localhost", nil
	case "AWS::StackId":
		return "arn:aws:cloudformation:us-east-1:123456789012:stack/local/51af3dc0-da77-11e4-872e-1234567db123", nil
	case "AWS::NoValue":
		return "", nil
	}
	if _, ok := r.resources[name]; !ok {
		return "", fmt.Errorf("!Ref %s: no such parameter or resource", name)
	}
	return name, nil
}

func (r *resolver) samGetAtt(res, attr string) (string, error) {
	if attr == "Arn" {
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", r.names.Region, SAMLocalAccount, res), nil
	}
	return "", fmt.Errorf("!GetAtt %s.%s: sam local cannot resolve it", res, attr)
}
