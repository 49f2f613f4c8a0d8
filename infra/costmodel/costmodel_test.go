package costmodel_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/costmodel"
)

// What a generation costs with a real provider (issue 24): with the
// stack's own figures (template.yaml: a small Poll function, the default
// poll interval), 1,000 Veo generations cost AWS at most half of what
// they did when Generate polled at 3,008 MB every 10 s, under the same
// stated assumptions.
func TestVeoCostsAtMostHalfOfBefore(t *testing.T) {
	s, err := costmodel.FromTemplate("../..")
	if err != nil {
		t.Fatal(err)
	}
	if s.PollMB == 0 || s.PollMB > 512 || s.PollInterval < 5*time.Second {
		t.Errorf("template figures %+v: want a Poll function of at most 512 MB and a poll interval of 5 s or more", s)
	}
	now := costmodel.Provider("veo", s, costmodel.Assumed, costmodel.USEast1)
	before := costmodel.Provider("veo before", costmodel.Before, costmodel.Assumed, costmodel.USEast1)
	if now.Total() > before.Total()/2 {
		t.Errorf("1,000 Veo generations cost $%.2f, before $%.2f: want at most half", now.PerThousand(), before.PerThousand())
	}
	// The measure of before: about 32 transitions and 20 GB-s.
	if got := before.Lines[0].Count; got != "32" {
		t.Errorf("before: %s transitions, want 32 (a 90 s job polled every 10 s)", got)
	}
	var out bytes.Buffer
	costmodel.Print(&out, s, costmodel.Assumed, costmodel.USEast1)
	for _, want := range []string{"builtin", "veo before", "veo now / before", "Step Functions state transitions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printed model lacks %q:\n%s", want, out.String())
		}
	}
}
