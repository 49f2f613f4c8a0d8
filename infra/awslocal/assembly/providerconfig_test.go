package assembly

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/awslocal/localdeploy"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
)

// Issue 34, defect 9: an operator with many routes gives them, and their
// own models, as one Secrets Manager secret (ProviderConfigSecretArn)
// rather than as Routes and Models, which Lambda's 4 KB environment
// cannot hold. With a secret of 500 routes in the emulated Secrets
// Manager, every function's environment stays small; the models endpoint
// offers the secret's model and its routes' limits (which the playground
// page shows from there); a
// start of that model is checked against it, charged its price, and
// generated on the route the secret gives it, the Complete step pricing
// it from the secret's catalog.
func TestProviderConfigSecret(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	secret := awsstacktest.ManyRoutes(500)
	a, _ := startAssembly(t, Config{DataDir: dir,
		Parameters: map[string]string{"ProviderConfigSecretArn": awsstacktest.ProviderConfigSecretARN},
		Secrets:    map[string]string{awsstacktest.ProviderConfigSecretARN: secret}})

	d, ok, err := localdeploy.Read(dir)
	if err != nil || !ok {
		t.Fatalf("localdeploy.Read: %v, %v", ok, err)
	}
	readers := 0
	for id, env := range d.Functions {
		n := 0
		for k, v := range env {
			n += len(k) + len(v)
		}
		if n > 4096 {
			t.Errorf("%s's environment is %d bytes, over Lambda's 4 KB, with a secret of %d", id, n, len(secret))
		}
		if env["GEN_PROVIDER_CONFIG_SECRET_ARN"] == awsstacktest.ProviderConfigSecretARN {
			readers++
		}
	}
	if len(secret) < 4*4096 || readers == 0 {
		t.Fatalf("a secret of %d bytes given to %d functions: want one far past 4 KB, given to the functions that read it", len(secret), readers)
	}

	// The models endpoint lists the secret's model, and the contract's
	// fast model with the limits of its one route, which makes text
	// starts only.
	status, body := call(t, http.MethodGet, a.BaseURL+"/api/gen/models", a.DevKey, "", nil)
	var models struct {
		Models []struct {
			ModelID string `json:"modelId"`
			Limits  struct {
				Modes []string `json:"modes"`
			} `json:"limits"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &models); status != http.StatusOK || err != nil {
		t.Fatalf("models: %d %s", status, body)
	}
	modes := map[string][]string{}
	for _, m := range models.Models {
		modes[m.ModelID] = m.Limits.Modes
	}
	if _, ok := modes[awsstacktest.DeclaredModelID]; !ok {
		t.Errorf("models lists %v, without the secret's %s", models.Models, awsstacktest.DeclaredModelID)
	}
	if got := modes[awsstacktest.TextOnlyRoutedModel]; !slices.Equal(got, []string{"text-to-video"}) {
		t.Errorf("%s's modes are %v, want its route's: text-to-video", awsstacktest.TextOnlyRoutedModel, got)
	}

	// A start the secret's model cannot make is refused before it is
	// charged; one it can is charged its price and generated on its route.
	c, err := client.New(a.BaseURL, a.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	status, body = call(t, http.MethodPost, a.BaseURL+"/api/gen/text-to-video", a.DevKey, "application/json",
		[]byte(`{"prompt": "a lighthouse", "model": "`+awsstacktest.DeclaredModelID+`", "resolution": "1080p"}`))
	if status != http.StatusBadRequest || !strings.Contains(string(body), "resolution") {
		t.Errorf("a 1080p start of a 720p model: %d %s, want 400 naming the resolution", status, body)
	}
	st, err := c.TextToVideo(ctx, client.Request{Prompt: "a lighthouse at dusk", Model: awsstacktest.DeclaredModelID, DurationSeconds: 4})
	if err != nil {
		t.Fatalf("a start of the secret's model: %v", err)
	}
	if st.CreditsUsed != awsstacktest.DeclaredModelPrice {
		t.Errorf("the start cost %d credits, want the secret's price %d", st.CreditsUsed, awsstacktest.DeclaredModelPrice)
	}
	done, err := c.Wait(ctx, st.TaskID, client.WaitOptions{Timeout: 5 * time.Minute, MinInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second})
	if err != nil || done.Status != "completed" {
		t.Fatalf("wait: %+v, %v", done, err)
	}
	tk, err := a.Store.Task(ctx, st.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Billing.Route != awsstacktest.DeclaredModelRoute || tk.CreditsRefunded != 0 {
		t.Errorf("the task ran on route %q with %d credits refunded, want %q and none", tk.Billing.Route, tk.CreditsRefunded, awsstacktest.DeclaredModelRoute)
	}
}
