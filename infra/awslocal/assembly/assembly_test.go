package assembly

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/awslocal/localdeploy"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// The suite starts the whole assembly once (it builds every function and
// starts DynamoDB Local) and drives it over TCP as a client would: the
// README's walk-through, a direct upload, the gateway's own answers, and
// a generate process killed mid-generation.
func TestAssembly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, logs := startAssembly(t, Config{DataDir: dir, ScheduleInterval: 2 * time.Second})
	if d, ok, err := localdeploy.Read(dir); err != nil || !ok || d.BaseURL != a.BaseURL {
		t.Fatalf("localdeploy.Read = %+v, %v, %v; want the running deployment for genctl", d, ok, err)
	}
	key, err := os.ReadFile(filepath.Join(dir, "dev-api-key"))
	if err != nil || strings.TrimSpace(string(key)) != a.DevKey {
		t.Fatalf("dev-api-key file: %q, %v; want %q", key, err, a.DevKey)
	}
	c, err := client.New(a.BaseURL, a.DevKey)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("walk-through", func(t *testing.T) {
		models, err := c.Models(ctx)
		if err != nil || len(models.Models) == 0 {
			t.Fatalf("models: %+v, %v", models, err)
		}
		st, err := c.TextToVideo(ctx, client.Request{Prompt: "a paper boat drifting on a pond at dawn", DurationSeconds: 4})
		if err != nil {
			t.Fatal(err)
		}
		done, err := c.Wait(ctx, st.TaskID, client.WaitOptions{Timeout: 5 * time.Minute, MinInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second})
		if err != nil || done.Status != "completed" {
			t.Fatalf("wait: %+v, %v", done, err)
		}
		dl, err := c.Download(ctx, st.TaskID)
		if err != nil || len(dl.Videos) == 0 {
			t.Fatalf("download: %+v, %v", dl, err)
		}
		// The presigned URL, fetched as curl would: straight from S3.
		res, err := http.Get(dl.Videos[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(body) < 12 || string(body[4:8]) != "ftyp" {
			t.Fatalf("GET the presigned URL: %d, %d bytes, starting %q; want an MP4", res.StatusCode, len(body), body[:min(len(body), 12)])
		}
		// A tampered signature is refused by S3.
		bad := strings.Replace(dl.Videos[0].URL, "X-Amz-Signature=", "X-Amz-Signature=0", 1)
		res, err = http.Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("GET a tampered presigned URL: %d, want 403", res.StatusCode)
		}

		// The playground, public on the same API, lets the page play and
		// upload to where the presigned links point: the emulated S3,
		// not the bucket's https origin the template names.
		res, err = http.Get(a.BaseURL + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		u, err := url.Parse(dl.Videos[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, directive := range []string{"media-src", "connect-src"} {
			if !strings.Contains(csp, directive+" 'self' blob: "+u.Scheme+"://"+u.Host) && !strings.Contains(csp, directive+" 'self' "+u.Scheme+"://"+u.Host) {
				t.Errorf("GET /: %s does not allow %s://%s in CSP %q", directive, u.Scheme, u.Host, csp)
			}
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "playground/app.js") {
			t.Errorf("GET / = %d (%d bytes); want the playground page", res.StatusCode, len(page))
		}
		// The page posts large images straight to the bucket: its CORS
		// rule lets the API's origin do so, and no other.
		gateway, _ := url.Parse(a.BaseURL)
		for _, tc := range []struct {
			origin string
			want   int
		}{
			{gateway.Scheme + "://" + gateway.Host, http.StatusOK},
			{"http://elsewhere.example", http.StatusForbidden},
		} {
			req, _ := http.NewRequest(http.MethodOptions, u.Scheme+"://"+u.Host+"/"+Bucket, nil)
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Access-Control-Request-Method", http.MethodPost)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			allow := res.Header.Get("Access-Control-Allow-Origin")
			if res.StatusCode != tc.want || (tc.want == http.StatusOK) != (allow == tc.origin) {
				t.Errorf("preflight of a POST to the bucket from %s: %d, Allow-Origin %q; want %d", tc.origin, res.StatusCode, allow, tc.want)
			}
		}
	})

	t.Run("image-to-video via a direct upload", func(t *testing.T) {
		id, err := c.UploadImage(ctx, client.ImageBytes("card.png", pngImage(t)))
		if err != nil {
			t.Fatal(err)
		}
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		mw.WriteField("prompt", "the card comes alive")
		mw.WriteField("durationSeconds", "4")
		mw.WriteField("imageUploadId", id)
		mw.Close()
		status, body := call(t, http.MethodPost, a.BaseURL+"/api/gen/image-to-video", a.DevKey, mw.FormDataContentType(), form.Bytes())
		if status != http.StatusAccepted {
			t.Fatalf("image-to-video: %d %s", status, body)
		}
		var st struct{ TaskID string }
		json.Unmarshal(body, &st)
		done, err := c.Wait(ctx, st.TaskID, client.WaitOptions{Timeout: 5 * time.Minute, MinInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second})
		if err != nil || done.Status != "completed" {
			t.Fatalf("wait: %+v, %v", done, err)
		}
	})

	// Issue 24, defect 3: the start function may not list the uploads, so
	// S3 answers a missing one 403 (the emulated S3 answers each function
	// as its role); a wrong, expired or used uploadId is still the
	// client's 400 MISSING_IMAGE naming the field, not a 503 "retry", and
	// charges nothing.
	t.Run("a missing upload id is the client's error", func(t *testing.T) {
		before, err := c.Credits(ctx, client.CreditsQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		mw.WriteField("prompt", "nothing uploaded")
		mw.WriteField("durationSeconds", "4")
		mw.WriteField("imageUploadId", "upl_0123456789abcdef0123456789abcdef")
		mw.Close()
		status, body := call(t, http.MethodPost, a.BaseURL+"/api/gen/image-to-video", a.DevKey, mw.FormDataContentType(), form.Bytes())
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"MISSING_IMAGE"`) || !strings.Contains(string(body), "imageUploadId") {
			t.Errorf("a start naming a missing upload: %d %s; want 400 MISSING_IMAGE naming imageUploadId", status, body)
		}
		after, err := c.Credits(ctx, client.CreditsQuery{})
		if err != nil || after.Balance != before.Balance {
			t.Errorf("balance %d before, %d after (%v): a refused start charges nothing", before.Balance, after.Balance, err)
		}
	})

	t.Run("gateway and function refusals", func(t *testing.T) {
		poor, err := a.CreateKey(ctx, admin.KeyRequest{Name: "poor", Credits: 10})
		if err != nil {
			t.Fatal(err)
		}
		status, body := call(t, http.MethodPost, a.BaseURL+"/api/gen/text-to-video", poor.APIKey, "application/json",
			[]byte(`{"prompt":"too dear","durationSeconds":4}`))
		if status != http.StatusPaymentRequired || !strings.Contains(string(body), `"INSUFFICIENT_CREDITS"`) {
			t.Errorf("start without credits: %d %s; want 402 INSUFFICIENT_CREDITS", status, body)
		}
		status, body = call(t, http.MethodGet, a.BaseURL+"/api/gen/models", "", "", nil)
		if status != http.StatusUnauthorized || !strings.Contains(string(body), `"UNAUTHORIZED"`) {
			t.Errorf("no key: %d %s; want the gateway's 401", status, body)
		}
		status, body = call(t, http.MethodGet, a.BaseURL+"/api/gen/models", "gen_notakeyatall0000000000000000000000000000", "", nil)
		if status != http.StatusUnauthorized {
			t.Errorf("unknown key: %d %s; want 401", status, body)
		}
		status, body = call(t, http.MethodGet, a.BaseURL+"/api/gen/no-such-route", poor.APIKey, "", nil)
		if status != http.StatusNotFound || !strings.Contains(string(body), `"NOT_FOUND"`) {
			t.Errorf("unknown route: %d %s; want 404 NOT_FOUND", status, body)
		}
		status, body = call(t, http.MethodPost, a.BaseURL+"/api/gen/image-to-video", poor.APIKey, "multipart/form-data; boundary=x",
			make([]byte, 10<<20+1))
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"FILE_TOO_LARGE"`) {
			t.Errorf("an 11 MB request: %d %.200s; want the gateway's 413", status, body)
		}
		// The Standard plan's burst is 10: twenty requests at once leave
		// some to the gateway's THROTTLED answer.
		throttled := 0
		for range 20 {
			status, body := call(t, http.MethodGet, a.BaseURL+"/api/gen/models", poor.APIKey, "", nil)
			if status == http.StatusTooManyRequests {
				throttled++
				if !strings.Contains(string(body), `"RATE_LIMIT_EXCEEDED"`) {
					t.Errorf("429 body %s; want the THROTTLED gateway response", body)
				}
			}
		}
		if throttled == 0 {
			t.Error("no 429 from the usage plan after 20 requests at once")
		}
	})

	t.Run("webhooks", func(t *testing.T) {
		k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "hooks", Credits: 5000, Tier: "pro"})
		if err != nil {
			t.Fatal(err)
		}
		// Every webhook path is routed to its function (template.yaml's
		// Api events), with the contract's 404 and 405 bodies.
		for _, c := range []struct {
			method, path string
			status       int
			want         string
		}{
			{http.MethodGet, "/api/gen/webhooks", http.StatusOK, `"webhooks":[]`},
			{http.MethodGet, "/api/gen/webhooks/secret", http.StatusOK, `"secret":"whsec_`},
			{http.MethodPut, "/api/gen/webhooks", http.StatusMethodNotAllowed, `"METHOD_NOT_ALLOWED"`},
			{http.MethodDelete, "/api/gen/webhooks/wh_nosuchendpoint", http.StatusNotFound, `"NOT_FOUND"`},
			{http.MethodGet, "/api/gen/webhooks/wh_nosuchendpoint/deliveries", http.StatusNotFound, `"NOT_FOUND"`},
			{http.MethodPost, "/api/gen/webhooks/wh_nosuchendpoint/deliveries/msg_x/replay", http.StatusNotFound, `"NOT_FOUND"`},
		} {
			status, body := call(t, c.method, a.BaseURL+c.path, k.APIKey, "", nil)
			if status != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("%s %s: %d %s; want %d with %s", c.method, c.path, status, body, c.status, c.want)
			}
		}
		// The AWS functions never deliver to private addresses: a
		// loopback URL is refused when created, and when given to a start.
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the receiver on loopback got a %s: the AWS assembly must refuse private addresses", r.Method)
		}))
		defer recv.Close()
		status, body := call(t, http.MethodPost, a.BaseURL+"/api/gen/webhooks", k.APIKey, "application/json",
			[]byte(`{"url":"`+recv.URL+`/hook"}`))
		if status != http.StatusBadRequest {
			t.Errorf("create with a loopback URL: %d %s; want 400", status, body)
		}
		status, body = call(t, http.MethodPost, a.BaseURL+"/api/gen/text-to-video", k.APIKey, "application/json",
			[]byte(`{"prompt":"a kite over a beach","durationSeconds":4,"webhookUrl":"https://127.0.0.1/hook"}`))
		if status != http.StatusBadRequest || !strings.Contains(string(body), "webhookUrl") {
			t.Errorf("start with a loopback webhookUrl: %d %s; want 400 on webhookUrl", status, body)
		}

		// An endpoint written straight into the store (as if its name had
		// resolved to a public address then): the scheduled delivery
		// function attempts the task's events and its dialer refuses the
		// address; the attempts are listed.
		if err := a.Store.CreateWebhook(ctx, domain.WebhookEndpoint{ID: "wh_assemblyloopback", AccountID: k.AccountID,
			URL: recv.URL + "/hook", Events: domain.EventTypes, Secret: "whsec_" + strings.Repeat("A", 43) + "=", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		kc, err := client.New(a.BaseURL, k.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		st, err := kc.TextToVideo(ctx, client.Request{Prompt: "a kite over a beach", DurationSeconds: 4})
		if err != nil {
			t.Fatal(err)
		}
		if done, err := kc.Wait(ctx, st.TaskID, client.WaitOptions{Timeout: 5 * time.Minute, MinInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second}); err != nil || done.Status != "completed" {
			t.Fatalf("wait: %+v, %v", done, err)
		}
		var attempts []string
		for end := time.Now().Add(2 * time.Minute); time.Now().Before(end) && len(attempts) < 2; time.Sleep(time.Second) {
			status, body := call(t, http.MethodGet, a.BaseURL+"/api/gen/webhooks/wh_assemblyloopback/deliveries", k.APIKey, "", nil)
			var got struct {
				Deliveries []struct{ Event, TaskID, Error string }
			}
			if status != http.StatusOK || json.Unmarshal(body, &got) != nil {
				t.Fatalf("deliveries: %d %s", status, body)
			}
			attempts = attempts[:0]
			for _, d := range got.Deliveries {
				if d.TaskID == st.TaskID && d.Error != "" {
					attempts = append(attempts, d.Event)
				}
			}
		}
		if len(attempts) < 2 {
			t.Errorf("attempts of the task's processing and completed events: %v; want both, refused (the scheduled delivery function ran)", attempts)
		}
	})

	t.Run("kill the generate process mid-generation", func(t *testing.T) {
		k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "kill", Credits: 5000, Tier: "pro"})
		if err != nil {
			t.Fatal(err)
		}
		kc, err := client.New(a.BaseURL, k.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for range 3 {
			st, err := kc.TextToVideo(ctx, client.Request{Prompt: "doomed", DurationSeconds: 8, Resolution: "1080p"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, st.TaskID)
		}
		// Kill a generate process while it holds an invocation: the
		// step's invocation fails with Runtime.ExitError, Step Functions'
		// retry or the sweeper take it from there.
		killed := 0
		for deadline := time.Now().Add(2 * time.Minute); killed == 0 && time.Now().Before(deadline); {
			for _, p := range a.Pool("generate").Processes() {
				if p.Busy() && syscall.Kill(p.PID(), syscall.SIGKILL) == nil {
					killed++
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		if killed == 0 {
			t.Fatal("no generate process held an invocation to kill")
		}
		for _, id := range ids {
			tk, err := kc.Wait(ctx, id, client.WaitOptions{Timeout: 5 * time.Minute, MinInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second})
			var ge *client.GenerationError
			if err != nil && !errors.As(err, &ge) {
				t.Fatalf("task %s: %v", id, err)
			}
			if tk != nil && tk.Status != "completed" && tk.Status != "failed" {
				t.Errorf("task %s ended %s", id, tk.Status)
			}
		}
		problems, err := audit.Account(ctx, a.Store, k.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("ledger: %s", p)
		}
		if !strings.Contains(logs.String(), "Runtime.ExitError") {
			t.Error("no invocation failed with Runtime.ExitError: the kill did not land mid-invocation")
		}
	})
}

func call(t *testing.T, method, url, key, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func pngImage(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 640, 360))
	for y := range 360 {
		for x := range 640 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// startAssembly starts the assembly of this checkout with cfg on a free
// loopback port (on a fresh data directory unless cfg names one), closed
// when the test ends and its log printed if the test failed. A machine
// without DynamoDB Local (GEN_SKIP_DYNAMODB=1), or -short, skips the test.
func startAssembly(t *testing.T, cfg Config) (*Assembly, *logtest.Buffer) {
	t.Helper()
	if os.Getenv(dynamolocal.SkipEnv) == "1" {
		t.Skipf("%s=1: the assembly needs DynamoDB Local", dynamolocal.SkipEnv)
	}
	if testing.Short() {
		t.Skip("-short: the assembly builds every function and starts DynamoDB Local")
	}
	logs := &logtest.Buffer{}
	cfg.Root, cfg.Addr, cfg.Log = "../../..", "127.0.0.1:0", logs
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	a, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		if t.Failed() {
			t.Logf("the assembly's log:\n%s", logs.String())
		}
	})
	return a, logs
}
