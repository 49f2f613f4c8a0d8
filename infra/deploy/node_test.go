package deploy

import (
	"testing"

	"github.com/genvideo/gen/shared/nodetools"
)

// The npm packages the state machine tests run, pinned.
// aws-local-stepfunctions needs Node.js 22 or newer, which nodetools
// installs with them.
const (
	aslValidatorPkg       = "asl-validator@4.0.0"
	awsLocalStepFunctions = "aws-local-stepfunctions@3.0.0"
)

// requireNodeTools returns the installed tools, installing them on first
// use (nodetools.Require).
func requireNodeTools(t *testing.T) nodetools.Tools {
	t.Helper()
	return nodetools.Require(t, aslValidatorPkg, awsLocalStepFunctions)
}
