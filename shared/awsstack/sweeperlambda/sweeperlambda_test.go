package sweeperlambda

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
)

func TestNewNeedsTheStateMachine(t *testing.T) {
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvStateMachineARN) {
		t.Errorf("Sweeper without a state machine = %v, want an error naming %s", err, awsstack.EnvStateMachineARN)
	}
}
