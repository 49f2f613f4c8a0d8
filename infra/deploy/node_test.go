package deploy

import (
	"testing"

	"github.com/genvideo/gen/shared/nodetools"
)

// The npm packages the state machine tests run, pinned
// (shared/nodetools installs them with Node.js 22 into ~/.cache/gen).
const (
	aslValidatorPkg       = "asl-validator@4.0.0"
	awsLocalStepFunctions = "aws-local-stepfunctions@3.0.0"
)

// requireNodeTools returns the installed tools, installing them on first
// use; it skips the test when GEN_SKIP_NODE=1.
func requireNodeTools(t *testing.T) nodetools.Tools {
	t.Helper()
	return nodetools.Require(t, aslValidatorPkg, awsLocalStepFunctions)
}
