package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/infra/awslocal/assembly"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/testing/openaitest"
)

// burstPrice is what one burst start costs: lite, 4 s, no audio.
const burstPrice = 35

// burst measures one busy account on the AWS assembly (DynamoDB Local,
// the functions as processes behind the API Gateway emulator): n starts
// on one key released at once, on an account that can pay for afford of
// them. It prints how many got each status, the latencies, and the audit
// of the account's books once the answers are in. Every start the
// account can pay for should be 202, the rest 402 (or 429 for a limit),
// none 503.
func burst(ctx context.Context, n, afford int, out io.Writer) error {
	dir, err := os.MkdirTemp("", "gen-bench-burst-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log, err := os.Create(filepath.Join(dir, "aws-local.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// The generations run on a host elsewhere, as every real route's do:
	// the builtin generator's ffmpeg would render on the cores the
	// starts are measured on, while the burst is still being answered.
	host := httptest.NewServer(openaitest.New(openaitest.Config{Profile: settings.ProfileVLLMOmni, Polls: 2}))
	defer host.Close()
	routes := `{"routes": [{"name": "gpu", "kind": "openai", "profile": "vllm-omni", "endpoint": "` + host.URL + `",
		"usdPerSecond": 0.02, "modes": ["text-to-video"], "models": {"gen-3.1-lite-generate-001": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}]}`
	built := time.Now()
	a, err := assembly.Start(ctx, assembly.Config{Root: ".", Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Log: log,
		Parameters: map[string]string{"Routes": routes, "ProviderPollInterval": "5s"}})
	if err != nil {
		return fmt.Errorf("start the AWS assembly (run from the checkout's root): %w", err)
	}
	defer a.Close()
	fmt.Fprintf(out, "AWS assembly up in %v\n", time.Since(built).Round(time.Second))

	// The first burst is also the functions' cold starts: fifty
	// processes of the start function and of the authorizer begin on
	// this machine's cores, where on AWS each has a sandbox of its own.
	// It is printed, and three bursts on warm functions follow.
	for round := range 4 {
		k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "burst", Credits: int64(afford * burstPrice), Tier: "enterprise",
			Limits: store.KeyLimits{RequestsPerMinute: 100000, RequestsPerDay: 1000000, StartsPerMinute: 10000, MaxInFlight: 100}})
		if err != nil {
			return err
		}
		codes := make([]int, n)
		lat := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-gate
				codes[i], lat[i], errs[i] = startOnce(ctx, a.BaseURL, k.APIKey, i)
			})
		}
		began := time.Now()
		close(gate)
		wg.Wait()
		wall := time.Since(began)
		count := map[int]int{}
		for i, c := range codes {
			if errs[i] != nil {
				return errs[i]
			}
			count[c]++
		}
		slices.Sort(lat)
		var statuses []string
		for _, c := range slices.Sorted(func(yield func(int) bool) {
			for c := range count {
				if !yield(c) {
					return
				}
			}
		}) {
			statuses = append(statuses, fmt.Sprintf("%d×%d", count[c], c))
		}
		// The audit wants no change under way: the accepted starts'
		// generations run to their end first.
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
			acct, err := a.Store.Account(ctx, k.AccountID)
			if err != nil {
				return err
			}
			if acct.InFlight == 0 || time.Now().After(deadline) {
				break
			}
		}
		problems, err := audit.Account(ctx, a.Store, k.AccountID)
		if err != nil {
			return err
		}
		books := "exact"
		if len(problems) > 0 {
			books = strings.Join(problems, "; ")
		}
		label := fmt.Sprintf("burst %d", round)
		if round == 0 {
			label = "cold burst"
		}
		fmt.Fprintf(out, "%s: %d starts on one account paying for %d: %s; latency p50 %s, p90 %s, max %s; all answered in %s; books %s\n",
			label, n, afford, strings.Join(statuses, " "), ms(lat[n/2]), ms(lat[n*9/10]), ms(lat[n-1]), ms(wall), books)
	}
	return nil
}

// startOnce is one start, and how long it took to answer.
func startOnce(ctx context.Context, base, key string, i int) (int, time.Duration, error) {
	body := fmt.Sprintf(`{"prompt":"burst %d","model":"gen-3.1-lite-generate-001","generateAudio":false,"durationSeconds":4}`, i)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/gen/text-to-video", strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	began := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(began), nil
}
