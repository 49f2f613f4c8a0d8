// Package generate builds the Generate step of the state machine: the
// ffmpeg renderer storing videos in S3. Only the generate Lambda imports
// it, so that no other binary links the renderer.
package generate

import (
	"fmt"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/media"
	"github.com/genvideo/gen/shared/awsstack/steps"
	"github.com/genvideo/gen/shared/render"
	"github.com/genvideo/gen/shared/workflow"
)

// Steps returns the workflow steps with blob storage and the ffmpeg
// generator, for Generate. It needs GEN_BUCKET, and ffmpeg at
// GEN_FFMPEG_PATH (checked now, so that a missing layer fails the cold
// start rather than every task).
func Steps(s *awsstack.Stack) (*workflow.Steps, error) {
	blobs, err := media.Store(s)
	if err != nil {
		return nil, err
	}
	r, err := render.New(render.Config{FFmpegPath: s.Env.FFmpegPath, FontFile: s.Env.FontFile})
	if err != nil {
		return nil, fmt.Errorf("generator (%s=%q): %w", awsstack.EnvFFmpegPath, s.Env.FFmpegPath, err)
	}
	st := steps.New(s)
	st.Blobs = blobs
	st.Generator = r
	return st, nil
}
