// Package samtemplate reads template.yaml, the one description of the AWS
// assembly, for the programs and tests that emulate it on one machine:
// ParseYAML decodes CloudFormation YAML with its intrinsic-function tags,
// and Load resolves what infra/aws-local runs (functions with their
// environment and events, the API's authorizer, gateway responses and
// usage plans, the state machine and its substitutions).
package samtemplate

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// A CloudFormation template in YAML writes intrinsic functions with tags
// (!Ref X, !GetAtt A.B, !Sub "..."), which a plain YAML decoder either
// rejects or silently turns into strings, losing the reference. cfnDecode
// converts them to their long JSON form ({"Ref": X}, {"Fn::GetAtt": [A,
// B]}, {"Fn::Sub": "..."}), so that the checks below see every reference,
// and refuses a tag it does not know, so that a typo in a tag is an error
// rather than a string.

// shortForms maps each short-form tag to its long-form key.
var shortForms = map[string]string{
	"!Ref":          "Ref",
	"!Condition":    "Condition",
	"!GetAtt":       "Fn::GetAtt",
	"!Sub":          "Fn::Sub",
	"!Join":         "Fn::Join",
	"!Select":       "Fn::Select",
	"!Split":        "Fn::Split",
	"!If":           "Fn::If",
	"!Equals":       "Fn::Equals",
	"!Not":          "Fn::Not",
	"!And":          "Fn::And",
	"!Or":           "Fn::Or",
	"!FindInMap":    "Fn::FindInMap",
	"!Base64":       "Fn::Base64",
	"!Cidr":         "Fn::Cidr",
	"!GetAZs":       "Fn::GetAZs",
	"!ImportValue":  "Fn::ImportValue",
	"!Transform":    "Fn::Transform",
	"!ToJsonString": "Fn::ToJsonString",
	"!Length":       "Fn::Length",
}

// ParseYAML decodes a CloudFormation YAML document into maps, slices and
// scalars, with every intrinsic function in long form.
func ParseYAML(data []byte) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	v, err := cfnDecode(&doc)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is a %T, not a mapping", v)
	}
	return m, nil
}

func cfnDecode(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return cfnDecode(n.Content[0])
	case yaml.AliasNode:
		return cfnDecode(n.Alias)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		long, ok := shortForms[n.Tag]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
		}
		var arg any
		if n.Kind == yaml.ScalarNode {
			// The argument of a tagged scalar is its text, never a
			// number or a boolean.
			arg = n.Value
			if long == "Fn::GetAtt" {
				res, attr, ok := strings.Cut(n.Value, ".")
				if !ok {
					return nil, fmt.Errorf("line %d: !GetAtt %s has no attribute", n.Line, n.Value)
				}
				arg = []any{res, attr}
			}
		} else {
			untagged := *n
			untagged.Tag = ""
			var err error
			if arg, err = cfnDecode(&untagged); err != nil {
				return nil, err
			}
		}
		return map[string]any{long: arg}, nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
			}
			v, err := cfnDecode(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := cfnDecode(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
}
