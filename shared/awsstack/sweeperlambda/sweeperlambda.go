// Package sweeperlambda builds the sweeper Lambda (functions/sweeper):
// the sweeper (shared/sweeper) on the stack's store and Step Functions.
// It fails and refunds tasks past their deadline and starts the
// executions of tasks that have none.
package sweeperlambda

import (
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/executions"
	"github.com/genvideo/gen/shared/awsstack/steps"
	"github.com/genvideo/gen/shared/sweeper"
)

// New returns the sweeper of unfinished tasks. It needs
// GEN_STATE_MACHINE_ARN.
func New(s *awsstack.Deployment) (*sweeper.Sweeper, error) {
	st, err := executions.New(s)
	if err != nil {
		return nil, err
	}
	return sweeper.New(sweeper.Config{
		Tasks:      s.Store,
		Failer:     steps.New(s),
		Executions: st,
		Logger:     s.Logger,
	}), nil
}
