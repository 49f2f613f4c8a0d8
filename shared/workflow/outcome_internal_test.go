package workflow

import (
	"testing"

	"github.com/genvideo/gen/shared/asl"
)

// TestErrorNameIsASLs: an ordinary end answered as an Outcome's Failure
// names its error as the local interpreter names a raised one, so that
// the definition routes both alike on AWS and locally.
func TestErrorNameIsASLs(t *testing.T) {
	for _, err := range []error{&ContentPolicyViolation{}, &DeadlineExceeded{}, &GenerationFailed{}, &ModelUnavailable{}, &ProviderOutcomeUnknown{}} {
		if got, want := errorName(err), asl.ErrorName(err); got != want || got == "" {
			t.Errorf("errorName(%T) = %q, asl.ErrorName = %q", err, got, want)
		}
	}
}
