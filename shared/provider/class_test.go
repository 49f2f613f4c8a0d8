package provider_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/provider"
)

// TestClassify: the outermost classified error of a chain decides, so
// that a wrapper (a wait around a refused poll, a route's busy answer
// around its provider's) says what the whole means.
func TestClassify(t *testing.T) {
	busy := &provider.Error{Answer: provider.Answer{Class: provider.Busy, After: time.Second}, Err: errors.New("429")}
	refused := &provider.Error{Answer: provider.Answer{Class: provider.Refused, Category: "violence"}, Err: errors.New("support codes: 61493863")}
	tests := []struct {
		name string
		err  error
		want provider.Answer
	}{
		{"no error", nil, provider.Answer{Class: provider.Accepted}},
		{"unnamed", errors.New("open /tmp/x: no such file"), provider.Answer{Class: provider.Failed}},
		{"busy, wrapped", fmt.Errorf("submit: %w", busy), busy.Answer},
		{"refused", refused, refused.Answer},
		{"busy around a refusal", &provider.Error{Answer: provider.Answer{Class: provider.Busy, Operator: true}, Err: refused},
			provider.Answer{Class: provider.Busy, Operator: true}},
	}
	for _, tt := range tests {
		if got := provider.Classify(tt.err); got != tt.want {
			t.Errorf("%s: Classify(%v) = %+v, want %+v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestMovesOn: only a refusal of the route's own hands a job to the
// next route; nothing that may run, or that is the customer's, does.
func TestMovesOn(t *testing.T) {
	for c := provider.Accepted; c <= provider.Failed; c++ {
		want := c == provider.Busy || c == provider.CredentialsRefused || c == provider.ModelRetired
		if got := c.MovesOn(); got != want {
			t.Errorf("%s.MovesOn() = %v, want %v", c, got, want)
		}
	}
}

func ExampleClass_FailureCode() {
	fmt.Println(provider.Refused.FailureCode(), provider.ModelRetired.FailureCode(), provider.CredentialsRefused.FailureCode())
	// Output: CONTENT_POLICY_VIOLATION MODEL_UNAVAILABLE GENERATION_FAILED
}
