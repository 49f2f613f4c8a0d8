package steps

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
)

func TestNewHasTheStore(t *testing.T) {
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if steps := New(s); steps.Store == nil || steps.Store != s.Store {
		t.Error("Steps has no store")
	}
}
