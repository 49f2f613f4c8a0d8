// Package statemachine holds the Amazon States Language definitions of the
// service's workflows, embedded so that the local runner executes the very
// file that is deployed to AWS Step Functions.
package statemachine

import _ "embed"

// Generation is generation.asl.json: it drives one task from pending to
// completed, or to failed with its credits refunded. Its Task resources
// are the placeholders ${MarkProcessingFunctionArn}, ${GenerateFunctionArn},
// ${PollFunctionArn}, ${CompleteFunctionArn} and ${FailFunctionArn}, filled by
// SAM's DefinitionSubstitutions on AWS and by localexec.Executions locally.
//
//go:embed generation.asl.json
var Generation []byte
