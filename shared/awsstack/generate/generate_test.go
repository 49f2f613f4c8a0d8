package generate

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
)

// Generate refuses to start without its bucket or its ffmpeg, naming the
// variable; its steps keep the store of the others.
func TestStepsNameMissingConfiguration(t *testing.T) {
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvBucket) {
		t.Errorf("GenerateSteps without a bucket = %v, want an error naming %s", err, awsstack.EnvBucket)
	}
	s.Env.Bucket, s.Env.FFmpegPath = "media", "/nonexistent/ffmpeg"
	if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvFFmpegPath) {
		t.Errorf("GenerateSteps without ffmpeg = %v, want an error naming %s", err, awsstack.EnvFFmpegPath)
	}
}
