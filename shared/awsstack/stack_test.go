package awsstack

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Every function needs the table prefix; the builders check the rest.
func TestNewNeedsTheTablePrefix(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1"}
	if _, err := New(Env{}, cfg, nil); err == nil || !strings.Contains(err.Error(), EnvTablePrefix) {
		t.Errorf("New without a table prefix = %v, want an error naming %s", err, EnvTablePrefix)
	}
	s, err := New(Env{TablePrefix: "gen-"}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Store == nil {
		t.Error("New made no store")
	}
	err = s.Require("the test", EnvBucket, EnvStateMachineARN)
	for _, name := range []string{EnvBucket, EnvStateMachineARN} {
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "the test") {
			t.Errorf("Require without configuration = %v, want an error naming %s and what needs it", err, name)
		}
	}
	if err := s.Require("the test", EnvTablePrefix); err != nil {
		t.Errorf("Require of a set variable = %v", err)
	}
}
