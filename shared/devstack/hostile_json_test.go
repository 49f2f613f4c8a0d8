package devstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/openapitest"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// Issue 31: JSON that means one thing, and the defects a third hostile
// battery found, each over real TCP on the stack `make run` assembles
// (and on the AWS assembly where the test needs no configuration).

// jsonBodies is a valid body of each operation whose request body the
// OpenAPI document describes as JSON, by operationId. An operation the
// document adds without an entry here fails the test: every JSON body
// is tried.
var jsonBodies = map[string]string{
	"textToVideo":       `{"prompt":"one meaning","model":"gen-3.1-lite-generate-001","durationSeconds":4}`,
	"quoteTextToVideo":  `{"prompt":"one meaning","model":"gen-3.1-lite-generate-001","durationSeconds":4}`,
	"createUpload":      `{"contentType":"image/png"}`,
	"setSpendingCaps":   `{"maxCreditsPerDay":500,"maxCreditsPerMonth":5000}`,
	"createWebhook":     `{"url":"https://93.184.215.14/hook","events":["generation.completed"]}`,
	"openaiCreateVideo": `{"prompt":"one meaning","model":"gen-3.1-lite-generate-001","seconds":"4"}`,
	// An extension names a completed task its route extends: they are
	// tried on a Veo stack (TestVeoExtensionBodiesMeanOneThing).
	// OpenAI's names the task in its body: {taskId} is the task's id.
	"extendVideo":       `{"prompt":"one meaning","durationSeconds":8}`,
	"quoteExtendVideo":  `{"prompt":"one meaning","durationSeconds":8}`,
	"openaiExtendVideo": `{"prompt":"one meaning","seconds":"8","video":{"id":"{taskId}"}}`,
}

// extensionOps are the operations that need a task to extend.
var extensionOps = map[string]bool{"extendVideo": true, "quoteExtendVideo": true, "openaiExtendVideo": true}

// jsonOp is one operation with a JSON request body.
type jsonOp struct {
	id, method, path string
	// nullAbsent: the schema says a null field counts as absent
	// (x-null-means-absent); elsewhere null is refused.
	nullAbsent bool
}

// jsonOps lists the document's operations with a JSON request body.
func jsonOps(t *testing.T) []jsonOp {
	t.Helper()
	doc, err := openapitest.Doc()
	if err != nil {
		t.Fatal(err)
	}
	var ops []jsonOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil {
				continue
			}
			_, nullAbsent := mt.Schema.Value.Extensions["x-null-means-absent"]
			ops = append(ops, jsonOp{id: op.OperationID, method: method, path: path, nullAbsent: nullAbsent})
		}
	}
	slices.SortFunc(ops, func(a, b jsonOp) int { return strings.Compare(a.id, b.id) })
	return ops
}

// variant is a body that could mean two things, and the field its
// refusal names ("" for the body as a whole).
type variant struct {
	name, body, field string
}

// member is one member of a body, its value as written.
type member struct {
	name string
	raw  json.RawMessage
}

// members reads a flat JSON object's members in order.
func members(t *testing.T, body string) []member {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not an object", body)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, member{tok.(string), raw})
	}
	return out
}

// object writes members as a JSON object, keys as given.
func object(ms []member) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", m.name, m.raw)
	}
	b.WriteByte('}')
	return b.String()
}

// variants are the ways base can be written to mean two things: a field
// in another case (alone, or beside itself), a field twice, a field
// null, an unknown field, data after the object, and a null body.
func variants(t *testing.T, base string, nullAbsent bool) []variant {
	t.Helper()
	ms := members(t, base)
	with := func(i int, m member) string {
		c := slices.Clone(ms)
		c[i] = m
		return object(c)
	}
	var out []variant
	for i, m := range ms {
		for _, other := range []string{strings.ToLower(m.name), strings.ToUpper(m.name[:1]) + m.name[1:], strings.ToUpper(m.name)} {
			if other != m.name {
				out = append(out, variant{"field " + other, with(i, member{other, m.raw}), other})
			}
		}
		out = append(out,
			variant{m.name + " and " + strings.ToUpper(m.name), object(append(slices.Clone(ms), member{strings.ToUpper(m.name), m.raw})), strings.ToUpper(m.name)},
			variant{m.name + " twice", object(append(slices.Clone(ms), m)), m.name})
		if !nullAbsent {
			out = append(out, variant{m.name + " null", with(i, member{m.name, json.RawMessage("null")}), m.name})
		}
	}
	return append(out,
		variant{"an unknown field", object(append(slices.Clone(ms), member{"zzUnknown", json.RawMessage("1")})), "zzUnknown"},
		variant{"a second object", base + "{}", ""},
		variant{"a stray brace", base + "}", ""},
		variant{"a word after", base + " x", ""},
		variant{"a null body", "null", ""},
		variant{"an array body", "[" + base + "]", ""})
}

// sendJSON posts body to op as its client would: the OpenAI facade's
// with the key as a bearer token.
func (e *env) sendJSON(op jsonOp, key, body string) response {
	e.t.Helper()
	h := http.Header{}
	if strings.HasPrefix(op.path, "/openai/") {
		h.Set("Authorization", "Bearer "+key)
		key = ""
	}
	return e.doWith(strings.ToUpper(op.method), op.path, key, "application/json", strings.NewReader(body), h)
}

// wantRefused checks r is the 400 of a body refused as a validation
// error naming field, in the contract's shape or the facade's.
func wantRefused(t *testing.T, op jsonOp, v variant, r response) {
	t.Helper()
	if r.status != http.StatusBadRequest {
		t.Errorf("%s, %s: %s answered %d %s, want 400", op.id, v.name, v.body, r.status, r.raw)
		return
	}
	if strings.HasPrefix(op.path, "/openai/") {
		e, _ := r.body["error"].(map[string]any)
		param, _ := e["param"].(string)
		if e["type"] != "invalid_request_error" || param != v.field {
			t.Errorf("%s, %s: %s answered %s, want an invalid_request_error naming param %q", op.id, v.name, v.body, r.raw, v.field)
		}
		return
	}
	field, _ := r.body["field"].(string)
	if r.body["error"] != "VALIDATION_ERROR" || field != v.field {
		t.Errorf("%s, %s: %s answered %s, want a VALIDATION_ERROR naming field %q", op.id, v.name, v.body, r.raw, v.field)
	}
}

// accountState is what a refused body must leave as it was.
type accountState struct {
	balance  int64
	tasks    int
	caps     store.SpendCaps
	webhooks string
}

func (e *env) accountState(k admin.CreatedKey) accountState {
	e.t.Helper()
	ctx := context.Background()
	_, n, err := e.store.Tasks(ctx, k.AccountID, store.TaskQuery{Limit: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	keys, err := e.store.Keys(ctx, k.AccountID)
	if err != nil || len(keys) != 1 {
		e.t.Fatalf("Keys = %v, %v", keys, err)
	}
	hooks := e.do(http.MethodGet, "/api/gen/webhooks", k.APIKey, "", nil)
	return accountState{balance: e.balance(k.AccountID), tasks: n, caps: keys[0].Caps, webhooks: string(hooks.raw)}
}

// TestEveryJSONBodyMeansOneThing (issue 31, defects 3 and 4, and their
// class): each JSON body the OpenAPI document describes, written so that
// a careless reader could take it two ways, is a 400 naming the field,
// and changes nothing: no charge, no task, no cap, no webhook. Among
// them the battery's PATCH bodies: {"maxcreditsperday":5},
// {"MaxCreditsPerDay":5}, {"maxCreditsPerDay":500,"MAXCREDITSPERDAY":5},
// {"maxCreditsPerDay":null} and null, each of which set or kept a cap.
// Where the schema says null counts as absent, a null field is answered
// as the body without it (on the quote, which charges nothing). The
// valid body of each is then accepted: the refusals were the variants'.
func TestEveryJSONBodyMeansOneThing(t *testing.T) {
	e := startEnv(t, "", nil)
	ops := jsonOps(t)
	for _, op := range ops {
		if _, ok := jsonBodies[op.id]; !ok {
			t.Errorf("%s %s (%s) has a JSON body this test has no valid example of: add one to jsonBodies", op.method, op.path, op.id)
		}
	}
	if len(ops) != len(jsonBodies) {
		t.Fatalf("the document has %d operations with a JSON body, the test %d examples", len(ops), len(jsonBodies))
	}
	for _, op := range ops {
		if extensionOps[op.id] {
			continue
		}
		t.Run(op.id, func(t *testing.T) {
			// An account of its own: a webhook registered here must
			// never be sent an event.
			k := e.key(10000, store.KeyLimits{})
			before := e.accountState(k)
			base := jsonBodies[op.id]
			for _, v := range variants(t, base, op.nullAbsent) {
				wantRefused(t, op, v, e.sendJSON(op, k.APIKey, v.body))
			}
			if after := e.accountState(k); after != before {
				t.Errorf("the refused bodies changed the account: %+v, then %+v", before, after)
			}
			if op.nullAbsent && op.id == "quoteTextToVideo" {
				ms := members(t, base)
				for i, m := range ms {
					if m.name == "prompt" {
						continue
					}
					nulled := slices.Clone(ms)
					nulled[i].raw = json.RawMessage("null")
					without := slices.Delete(slices.Clone(ms), i, i+1)
					a, b := e.sendJSON(op, k.APIKey, object(nulled)), e.sendJSON(op, k.APIKey, object(without))
					if a.status != http.StatusOK || !bytes.Equal(a.raw, b.raw) {
						t.Errorf("%s null: %d %s; without it: %d %s; want the same quote", m.name, a.status, a.raw, b.status, b.raw)
					}
				}
			}
			if r := e.sendJSON(op, k.APIKey, base); r.status/100 != 2 {
				t.Errorf("the valid body %s answered %d %s", base, r.status, r.raw)
			}
		})
	}
}

// genctlStore is the store as genctl opens it beside a running service:
// on the embedded stack a second handle on its data directory, which
// the server's key cache knows nothing of; on the assembly, DynamoDB.
func (e *env) genctlStore() store.Store {
	e.t.Helper()
	if e.aws != nil {
		return e.store
	}
	s, err := OpenStore(e.cfg.DataDir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// TestHolderCannotEraseOperatorCap (issue 31, defect 2): the operator
// sets a daily cap on a key in use; a moment later the key's holder sets
// its monthly cap. The operator's cap stays: the PATCH writes the
// holder's cap alone, not the key as it was read when the request was
// authenticated. And the other way round: the operator's change keeps
// the holder's.
func TestHolderCannotEraseOperatorCap(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(10000, store.KeyLimits{})
	if r := e.do(http.MethodGet, "/api/gen/credits", k.APIKey, "", nil); r.status != http.StatusOK {
		t.Fatalf("credits = %d %s", r.status, r.raw)
	}
	genctl := admin.New(e.genctlStore())
	day := int64(100)
	if _, err := genctl.SetCaps(context.Background(), k.KeyID, admin.CapsUpdate{MaxCreditsPerDay: &day}); err != nil {
		t.Fatal(err)
	}
	r := e.do(http.MethodPatch, "/api/gen/credits", k.APIKey, "application/json", strings.NewReader(`{"maxCreditsPerMonth": 5000}`))
	if r.status != http.StatusOK {
		t.Fatalf("PATCH = %d %s", r.status, r.raw)
	}
	want := store.SpendCaps{MaxPerDay: 100, HolderPerMonth: 5000}
	if got := e.accountState(k).caps; got != want {
		t.Errorf("caps after the holder's PATCH = %+v, want %+v: the operator's daily cap of 100 stays", got, want)
	}
	caps := r.body["spendingCaps"].(map[string]any)
	if d := caps["day"].(map[string]any); d["operatorLimit"] != float64(100) || d["limit"] != float64(100) {
		t.Errorf("the PATCH answered the day's caps %v, want the operator's 100 in force", d)
	}

	month := int64(9000)
	if _, err := genctl.SetCaps(context.Background(), k.KeyID, admin.CapsUpdate{MaxCreditsPerMonth: &month}); err != nil {
		t.Fatal(err)
	}
	want = store.SpendCaps{MaxPerDay: 100, MaxPerMonth: 9000, HolderPerMonth: 5000}
	if got := e.accountState(k).caps; got != want {
		t.Errorf("caps after the operator's monthly cap = %+v, want %+v", got, want)
	}
}

// TestDefaultRouteListed (issue 31, defect 1): with GEN_GENERATOR unset
// (its default is builtin) and a model's routes ["wan", "builtin"], a
// start the first route cannot honour (an image, on a text-only host)
// completes on the default route; before, it crashed the Generate step
// and failed, refunded.
func TestDefaultRouteListed(t *testing.T) {
	gpu := openaitest.New(openaitest.Config{Profile: settings.ProfileVLLMOmni, Polls: 1})
	gsrv := httptest.NewServer(gpu)
	t.Cleanup(gsrv.Close)
	p := readRoutes(t, `{"routes": [`+wanRoute(gsrv.URL)+`], "models": {"gen-3.1-lite-generate-001": ["wan", "builtin"]}}`)
	e := startEnv(t, "", func(c *Config) { c.Provider = p })
	k := e.key(10000, store.KeyLimits{})
	picture := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
	for _, model := range []string{"gen-3.1-lite-generate-001", "gen-3.1-fast-generate-001"} {
		st := e.postForm("/api/gen/image-to-video", k.APIKey,
			map[string]string{"prompt": "a picture comes alive", "model": model, "durationSeconds": "4"}, map[string][]byte{"image": picture})
		if st.status != http.StatusAccepted {
			t.Fatalf("%s: start = %d %s", model, st.status, st.raw)
		}
		id := str(st.body["taskId"])
		if done := waitTask(t, e, id, time.Minute); done.Status != "completed" {
			t.Errorf("%s: task %s ended %s (%+v), want completed on the default route", model, id, done.Status, done.Failure)
		}
		s := e.do(http.MethodGet, "/api/gen/status/"+id, k.APIKey, "", nil)
		if got := str(s.body["route"]); got != "builtin" {
			t.Errorf("%s: task %s ran on route %q, want builtin", model, id, got)
		}
	}
	if n := len(gpu.Submits()); n != 0 {
		t.Errorf("the text-only host was sent %d image jobs", n)
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}

// TestOpenAIThumbnailIsThePoster (issue 31, defect 6): every video has a
// poster, so the facade's variant=thumbnail is a redirect to it, a JPEG;
// spritesheet, which gen does not make, stays a 400.
func TestOpenAIThumbnailIsThePoster(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(10000, store.KeyLimits{})
	op := jsonOp{id: "openaiCreateVideo", method: http.MethodPost, path: "/openai/v1/videos"}
	r := e.sendJSON(op, k.APIKey, `{"prompt":"a poster of a lighthouse","model":"gen-3.1-lite-generate-001","seconds":"4"}`)
	if r.status != http.StatusOK {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := str(r.body["id"])
	done := e.wait(k.APIKey, id)
	if done.body["status"] != "completed" {
		t.Fatalf("video ended %s", done.raw)
	}
	poster := str(done.body["videos"].([]any)[0].(map[string]any)["posterUrl"])
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	content := func(variant string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, e.url+"/openai/v1/videos/"+id+"/content?variant="+variant, nil)
		req.Header.Set("Authorization", "Bearer "+k.APIKey)
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := content("thumbnail")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || loc == "" {
		t.Fatalf("thumbnail = %d, Location %q; want a 302 to the poster", res.StatusCode, loc)
	}
	if stripQuery(loc) != stripQuery(poster) {
		t.Errorf("thumbnail redirects to %s, want the poster %s", loc, poster)
	}
	get, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	jpg, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "image/jpeg" || !bytes.HasPrefix(jpg, []byte{0xFF, 0xD8, 0xFF}) {
		t.Errorf("the thumbnail's link = %d %s, %d bytes; want a JPEG", get.StatusCode, get.Header.Get("Content-Type"), len(jpg))
	}
	if res := content("spritesheet"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("spritesheet = %d, want 400", res.StatusCode)
	}
}

// stripQuery is a signed link without its signature, which is made anew
// for each answer.
func stripQuery(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}
