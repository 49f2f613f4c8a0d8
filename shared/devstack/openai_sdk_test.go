package devstack

import (
	"encoding/json"
	"image/color"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/openaiapi"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/openapitest"
	"github.com/genvideo/gen/shared/testing/rendertest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
	"github.com/genvideo/gen/shared/testing/webhooktest"
)

// sdkError is how testdata/openai-sdk.cjs reports an error the SDK threw:
// which of its classes it is, and what it read of the answer.
type sdkError struct {
	Auth, BadRequest, RateLimit, NotFound bool
	Status                                int
	Param, Code, Type                     string
	RetryAfter                            string
}

// sdkReport is what testdata/openai-sdk.cjs writes.
type sdkReport struct {
	Created, Done, ImageDone, ContractTask openaiapi.Video
	ContentType                            string
	Pages, PagesAsc                        [][]string
	FirstHasMore, FirstAscHasMore          bool
	Listed, ListedAsc                      []string
	Deleted                                openaiapi.Deleted
	Errors                                 map[string]sdkError
}

// TestOpenAISDK drives the OpenAI-compatible videos API with the
// official `openai` npm package, over real TCP, against the stack as
// `make run` builds it (or the AWS assembly with GEN_E2E_STACK=aws-local):
// the SDK's create, retrieve, downloadContent, list with after in both
// orders, delete, an image-to-video start with input_reference, and the
// exception class of each error it raises. A task started through the SDK is in the
// contract's history with the contract's charge; one started through
// the contract is a video of the SDK.
func TestOpenAISDK(t *testing.T) {
	tools := nodetools.Require(t, nodetools.OpenAIPackage)
	e := startEnv(t, "", nil)
	const model = "gen-3.1-lite-generate-001"
	k := e.key(10000, store.KeyLimits{})
	limited := e.key(100, store.KeyLimits{RequestsPerMinute: 2, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 5})

	c := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"started through the contract","model":"`+model+`","durationSeconds":4}`)
	if c.status != http.StatusAccepted {
		t.Fatalf("contract start = %d: %s", c.status, c.raw)
	}
	contractID := str(c.body["taskId"])

	dir := t.TempDir()
	img := filepath.Join(dir, "frame.png")
	if err := os.WriteFile(img, testImage(t, 1280, 720, color.RGBA{200, 30, 30, 255}, color.RGBA{20, 40, 220, 255}), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]string{
		"baseURL": e.url + openaiapi.Base, "key": k.APIKey, "limitedKey": limited.APIKey,
		"model": model, "seconds": "4", "dir": dir, "image": img, "contractTaskID": contractID,
	})
	script, _ := filepath.Abs("testdata/openai-sdk.cjs")
	out, errOut, err := tools.RunInput(t.Context(), cfg, script)
	if err != nil {
		t.Fatalf("openai-sdk.cjs: %v\n%s", err, errOut)
	}
	var rep sdkReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}

	if rep.Created.Object != "video" || rep.Created.Status != "queued" || rep.Created.Seconds != "4" || rep.Created.Size != "1280x720" || rep.Created.Model != model {
		t.Errorf("created = %+v", rep.Created)
	}
	if rep.Done.Status != "completed" || rep.Done.Progress != 100 || rep.Done.CompletedAt == nil || rep.Done.ExpiresAt == nil {
		t.Fatalf("text video ended %+v", rep.Done)
	}
	if rep.ContentType != "video/mp4" {
		t.Errorf("content type %q, want video/mp4", rep.ContentType)
	}
	if d := rendertest.Probe(t, filepath.Join(dir, "text.mp4")).Duration; math.Abs(d-4) > 0.15 {
		t.Errorf("downloaded video lasts %.2f s, want the requested 4", d)
	}
	if rep.ImageDone.Status != "completed" {
		t.Errorf("image video ended %+v", rep.ImageDone)
	}
	if rep.ContractTask.ID != contractID || rep.ContractTask.Object != "video" || rep.ContractTask.Seconds != "4" {
		t.Errorf("the contract's task through the SDK = %+v", rep.ContractTask)
	}

	// Three tasks, newest first: pages of one follow each other, and the
	// SDK's own iteration (after=last_id) walks them all.
	want := []string{rep.ImageDone.ID, rep.Created.ID, contractID}
	if len(rep.Pages) != 2 || !slices.Equal(rep.Pages[0], want[:1]) || !slices.Equal(rep.Pages[1], want[1:2]) || !rep.FirstHasMore {
		t.Errorf("pages %v (has_more %v), want %v then %v", rep.Pages, rep.FirstHasMore, want[:1], want[1:2])
	}
	if !slices.Equal(rep.Listed, want) {
		t.Errorf("iterated %v, want %v", rep.Listed, want)
	}
	// order=asc walks the same tasks oldest first: the reverse.
	slices.Reverse(want)
	if len(rep.PagesAsc) != 2 || !slices.Equal(rep.PagesAsc[0], want[:1]) || !slices.Equal(rep.PagesAsc[1], want[1:2]) || !rep.FirstAscHasMore {
		t.Errorf("pages oldest first %v (has_more %v), want %v then %v", rep.PagesAsc, rep.FirstAscHasMore, want[:1], want[1:2])
	}
	if !slices.Equal(rep.ListedAsc, want) {
		t.Errorf("iterated oldest first %v, want %v", rep.ListedAsc, want)
	}
	if rep.Deleted != openaiapi.NewDeleted(rep.ImageDone.ID) {
		t.Errorf("deleted = %+v", rep.Deleted)
	}

	for name, check := range map[string]func(sdkError) bool{
		"auth":       func(e sdkError) bool { return e.Auth && e.Status == 401 },
		"badRequest": func(e sdkError) bool { return e.BadRequest && e.Status == 400 && e.Param == "seconds" },
		"notFound":   func(e sdkError) bool { return e.NotFound && e.Status == 404 },
		"rateLimit":  func(e sdkError) bool { return e.RateLimit && e.Status == 429 && e.RetryAfter != "" },
	} {
		if got, ok := rep.Errors[name]; !ok || !check(got) {
			t.Errorf("%s: the SDK raised %+v", name, got)
		}
	}

	// The SDK's task is in the contract's history, charged as the
	// contract's start of the same model.
	h := e.do(http.MethodGet, "/api/gen/history?limit=100", k.APIKey, "", nil)
	costs := map[string]int64{}
	for _, v := range h.body["videos"].([]any) {
		m := v.(map[string]any)
		costs[str(m["taskId"])] = num(m["creditsCost"])
	}
	m, _ := catalog.Lookup(model)
	if costs[rep.Created.ID] == 0 || costs[rep.Created.ID] != costs[contractID] || costs[contractID] != int64(m.Price(true)) {
		t.Errorf("history costs %v: the SDK's task %s and the contract's %s should both cost %d", costs, rep.Created.ID, contractID, m.Price(true))
	}
	if _, ok := costs[rep.ImageDone.ID]; ok {
		t.Errorf("history lists the video the SDK deleted")
	}
	if strings.Contains(string(out), k.APIKey) {
		t.Errorf("the report carries the key")
	}
}

// TestOpenAIStartFiresWebhooks: a video created on /openai/v1 is a task
// of the service like any other, whose events reach the account's
// registered endpoint.
func TestOpenAIStartFiresWebhooks(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, http.StatusNoContent)
	e := startEnv(t, "", func(c *Config) { c.WebhookAllowPrivate = true })
	k := e.key(1000, store.KeyLimits{})
	if reg := e.postJSON("/api/gen/webhooks", k.APIKey, `{"url":"`+rcv.URL+`/endpoint","events":["generation.completed"]}`); reg.status != http.StatusCreated {
		t.Fatalf("register = %d %s", reg.status, reg.raw)
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+openaiapi.Base+"/videos",
		strings.NewReader(`{"prompt":"a paper boat","model":"gen-3.1-lite-generate-001","seconds":"4"}`))
	req.Header.Set("Authorization", "Bearer "+k.APIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := openapitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v openaiapi.Video
	err = json.NewDecoder(res.Body).Decode(&v)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("create = %d (%v)", res.StatusCode, err)
	}
	if done := e.wait(k.APIKey, v.ID); done.body["status"] != "completed" {
		t.Fatalf("task ended %s", done.raw)
	}
	d := rcv.Await(t, 1)[0]
	if !strings.Contains(string(d.Body), `"taskId":"`+v.ID+`"`) || !strings.Contains(string(d.Body), "generation.completed") {
		t.Errorf("delivery %s, want generation.completed of %s", d.Body, v.ID)
	}
}

// TestDocsOpenAISnippet runs the TypeScript snippet of
// infra/docs/clients.md's OpenAI-compatible section as a reader pastes
// it, with the official SDK, against the running stack: it writes the
// MP4 and lists the video.
func TestDocsOpenAISnippet(t *testing.T) {
	tools := nodetools.Require(t, nodetools.OpenAIPackage)
	doc, err := os.ReadFile("../../infra/docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "\n## OpenAI-compatible videos API (`/openai/v1`)\n")
	if !ok {
		t.Fatal("infra/docs/clients.md has no OpenAI-compatible videos API section")
	}
	_, block, ok := strings.Cut(after, "\n```ts\n")
	if !ok {
		t.Fatal("the section has no ts block")
	}
	snippet, _, ok := strings.Cut(block, "\n```\n")
	if !ok || !strings.Contains(snippet, "http://127.0.0.1:8080/openai/v1") {
		t.Fatalf("the ts block does not end, or names no local base URL: %q", snippet)
	}
	e := startEnv(t, "", nil)
	k := e.key(1000, store.KeyLimits{})
	snippet = strings.ReplaceAll(snippet, "http://127.0.0.1:8080", e.url)
	// An ES module resolves "openai" from its own directory up: it runs
	// beside the installation's node_modules.
	script := filepath.Join(tools.Dir, "snippet-"+filepath.Base(t.TempDir())+".mjs")
	if err := os.WriteFile(script, []byte(snippet), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(script) })
	dir := t.TempDir()
	cmd := tools.Command(t.Context(), script)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "GEN_API_KEY="+k.APIKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the doc's snippet: %v\n%s", err, out)
	}
	if d := rendertest.Probe(t, filepath.Join(dir, "lighthouse.mp4")).Duration; math.Abs(d-4) > 0.15 {
		t.Errorf("lighthouse.mp4 lasts %.2f s, want 4", d)
	}
	if !strings.Contains(string(out), " completed") {
		t.Errorf("the snippet listed %q, want the completed video", out)
	}
}

// TestOpenAISDKExtensionAnd4K (issue 37): on a Veo-backed stack (the
// Gemini API's strict fake), the official SDK's create with a 4K size
// and its videos.extend of a completed video each complete with the
// request Google documents, charged what the contract's quote of the
// same start says; a 4K size on a model without it, the extension of a
// failed video or of a length the contract does not extend by are
// BadRequestErrors naming the OpenAI field, and another account's video
// a NotFoundError, none charged.
func TestOpenAISDKExtensionAnd4K(t *testing.T) {
	tools := nodetools.Require(t, nodetools.OpenAIPackage)
	const quality, lite = "gen-3.1-generate-001", "gen-3.1-lite-generate-001"
	e := startVeo(t, settings.GeneratorGemini, veotest.Config{}, "", nil)
	e.fake.When("this one fails", veotest.Outcome{ErrorCode: 13})
	k := e.key(100000, store.KeyLimits{})
	other := e.key(1000, store.KeyLimits{})
	failing := str(e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"this one fails","model":"`+quality+`","resolution":"720p"}`).body["taskId"])
	if done := e.wait(k.APIKey, failing); done.body["status"] != "failed" {
		t.Fatalf("the failing task ended %s", done.raw)
	}

	cfg, _ := json.Marshal(map[string]string{"baseURL": e.env.url + openaiapi.Base, "key": k.APIKey, "otherKey": other.APIKey,
		"quality": quality, "lite": lite, "failedID": failing})
	script, _ := filepath.Abs("testdata/openai-sdk-beyond.cjs")
	balance := e.balance(k.AccountID)
	out, errOut, err := tools.RunInput(t.Context(), cfg, script)
	if err != nil {
		t.Fatalf("openai-sdk-beyond.cjs: %v\n%s", err, errOut)
	}
	var rep struct {
		FourK, FourKDone, Source, SourceDone, Extended, ExtendedDone openaiapi.Video
		Errors                                                       map[string]sdkError
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if rep.FourK.Size != "3840x2160" || rep.FourKDone.Status != "completed" || rep.SourceDone.Status != "completed" {
		t.Fatalf("4K %+v ended %+v; the source ended %+v", rep.FourK, rep.FourKDone, rep.SourceDone)
	}
	if rep.ExtendedDone.Status != "completed" || rep.Extended.Model != quality || rep.ExtendedDone.Seconds != "15" || rep.ExtendedDone.Size != "1280x720" {
		t.Fatalf("the extension %+v ended %+v, want the stitched 15 s at 1280x720", rep.Extended, rep.ExtendedDone)
	}

	// What reached Google, and what each cost beside the contract's quote.
	if _, p := lastSubmit(t, e, "a city at 4k through the SDK"); p["resolution"] != "4k" || p["durationSeconds"] != float64(8) || p["aspectRatio"] != "16:9" {
		t.Errorf("4K parameters %v, want 4k at 8 s, 16:9", p)
	}
	in, p := lastSubmit(t, e, "and then the fox runs")
	src := storedTask(t, e.env, rep.Source.ID)
	if video, _ := in["video"].(map[string]any); video["uri"] != src.Videos[0].ProviderURI || p["resolution"] != "720p" {
		t.Errorf("extension instance %v, parameters %v: want the source's video at 720p", in, p)
	}
	for _, tt := range []struct{ id, quote, body string }{
		{rep.FourK.ID, "/api/gen/quote/text-to-video", `{"prompt":"a city","model":"` + quality + `","resolution":"4k"}`},
		{rep.Source.ID, "/api/gen/quote/text-to-video", `{"prompt":"a fox","model":"` + quality + `","resolution":"720p"}`},
		{rep.Extended.ID, "/api/gen/quote/extend?taskId=" + rep.Source.ID, `{"prompt":"and then"}`},
	} {
		q := e.postJSON(tt.quote, k.APIKey, tt.body)
		if tk := storedTask(t, e.env, tt.id); int64(tk.CreditsCost) != num(q.body["creditsRequired"]) || q.status != http.StatusOK {
			t.Errorf("task %s (%s) cost %d; the contract's quote %s says %s", tt.id, tk.Type, tk.CreditsCost, tt.quote, q.raw)
		}
	}
	if tk := storedTask(t, e.env, rep.Extended.ID); tk.Type != catalog.VideoExtension || tk.Billing.Route != src.Billing.Route {
		t.Errorf("the extension is a %s task on %q, want video-extension on the source's route %q", tk.Type, tk.Billing.Route, src.Billing.Route)
	}
	spent := int64(0)
	for _, id := range []string{rep.FourK.ID, rep.Source.ID, rep.Extended.ID} {
		spent += int64(storedTask(t, e.env, id).CreditsCost)
	}
	if b := e.balance(k.AccountID); b != balance-spent {
		t.Errorf("balance %d, want %d: the refused calls were charged", b, balance-spent)
	}
	if b := e.balance(other.AccountID); b != 1000 {
		t.Errorf("the other account's balance is %d", b)
	}

	for name, check := range map[string]func(sdkError) bool{
		"liteFourK":    func(e sdkError) bool { return e.BadRequest && e.Param == "size" },
		"extendFailed": func(e sdkError) bool { return e.BadRequest && e.Param == "video" },
		"extendLength": func(e sdkError) bool { return e.BadRequest && e.Param == "seconds" },
		"extendOthers": func(e sdkError) bool { return e.NotFound && e.Status == 404 },
	} {
		if got, ok := rep.Errors[name]; !ok || !check(got) {
			t.Errorf("%s: the SDK raised %+v", name, got)
		}
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}
