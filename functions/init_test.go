package functions_test

import (
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/testing/awsstacktest"
)

// coldStarts is how many times each endpoint is started to measure init.
const coldStarts = 5

// TestEndpointInit starts each endpoint function coldStarts times, as
// Lambda does on a cold start, and logs its init: process start to its
// first Runtime API next call. It asserts no timing (make bench reports
// the figures, infra/docs/performance.md); it fails when a function does
// not reach next, i.e. cannot start.
func TestEndpointInit(t *testing.T) {
	env := awsstacktest.Start(t)
	bins := awsstacktest.Build(t, "github.com/genvideo/gen/functions/...")
	for _, name := range endpointFunctions {
		bin, ok := bins[name]
		if !ok {
			t.Errorf("no binary for functions/%s", name)
			continue
		}
		inits := make([]time.Duration, 0, coldStarts)
		for range coldStarts {
			f := awsstacktest.StartFunction(t, name, bin, env.Environ(t))
			inits = append(inits, f.Init(t))
		}
		slices.Sort(inits)
		t.Logf("init %s: %v (of %d cold starts: %v)", name, inits[len(inits)/2].Round(10*time.Microsecond), coldStarts, inits)
	}
}
