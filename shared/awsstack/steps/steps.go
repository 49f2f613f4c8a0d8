// Package steps builds the workflow steps of the state machine's Task
// states that need only the store: MarkProcessing, Complete and Fail
// (the generate package adds S3 and the renderer for Generate).
package steps

import (
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/workflow"
)

// New returns the steps on the stack's store and logger.
func New(s *awsstack.Deployment) *workflow.Steps {
	return &workflow.Steps{Store: s.Store, Logger: s.Logger}
}
