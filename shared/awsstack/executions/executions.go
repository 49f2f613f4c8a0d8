// Package executions builds the Step Functions executions of the generation state
// machine, for the functions that start executions: the start endpoints
// (through the endpoint package) and the sweeper.
package executions

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/sfnstart"
)

// New returns the executions of GEN_STATE_MACHINE_ARN.
func New(s *awsstack.Deployment) (*sfnstart.Executions, error) {
	if err := s.Require("starting the workflow", awsstack.EnvStateMachineARN); err != nil {
		return nil, err
	}
	st, err := sfnstart.New(sfn.NewFromConfig(s.AWS), s.Env.StateMachineARN, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", awsstack.EnvStateMachineARN, err)
	}
	return st, nil
}
