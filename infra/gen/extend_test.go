package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// Reference images and extensions are Veo's (issue 37): on a stack
// routed to the strict Veo fake, generate --reference (a file, then an
// upload's id) starts as gen quote said, gen extend continues the video
// and saves it, as gen quote extend said; refused flags send nothing,
// and a refused extension charges nothing.
func TestReferencesAndExtend(t *testing.T) {
	t.Parallel()
	e, fake := devstacktest.StartVeo(t, settings.GeneratorGemini, veotest.Config{Delay: time.Second}, nil)
	k := e.Key(t, 100000, store.KeyLimits{})
	vars := map[string]string{"GEN_API_KEY": k.APIKey, "GEN_BASE_URL": e.URL}
	run := func(args ...string) result {
		t.Helper()
		return genWith(t, vars, true, args...)
	}
	ref := pngFile(t)
	flags := []string{"--model", "quality", "--resolution", "720p", "--reference", ref}

	var q client.Quote
	r := run(append([]string{"quote", "the grey fox", "--json"}, flags...)...)
	if err := json.Unmarshal([]byte(r.stdout), &q); err != nil || r.code != exitOK || !q.Allowed || q.Endpoint != "text-to-video" {
		t.Fatalf("quote --reference: %v (%v)", r, err)
	}
	out := t.TempDir()
	r = run(append([]string{"generate", "the grey fox", "--json", "--out", out}, flags...)...)
	var g generateResult
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil || r.code != exitOK || len(g.Files) != 1 {
		t.Fatalf("generate --reference: %v (%v)", r, err)
	}
	s := g.Started.Started
	if len(s.ReferenceImages) != 1 || s.ReferenceImages[0].OriginalName != "grey.png" || s.CreditsUsed != q.CreditsRequired {
		t.Errorf("started %+v, want grey.png as its reference image, charged %d as quoted", s, q.CreditsRequired)
	}

	// An upload's id names the upload.
	c, err := client.New(e.URL, k.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.UploadImage(t.Context(), client.ImageFile(ref))
	if err != nil {
		t.Fatalf("UploadImage: %v", err)
	}
	r = run("generate", "the fox once more", "--model", "quality", "--resolution", "720p", "--reference", id, "--no-wait", "--json")
	if r.code != exitOK || !strings.Contains(r.stdout, `"originalName": "`+id+`"`) {
		t.Errorf("generate --reference %s: %v", id, r)
	}

	// The extension, as its quote said, waited for and saved.
	r = run("quote", "extend", s.TaskID, "and then it runs", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &q); err != nil || r.code != exitOK || !q.Allowed || q.Endpoint != "extend" {
		t.Fatalf("quote extend: %v (%v)", r, err)
	}
	out = t.TempDir()
	r = run("extend", s.TaskID, "and then it runs", "--out", out)
	paths := strings.Fields(r.stdout)
	if r.code != exitOK || len(paths) != 1 || filepath.Dir(paths[0]) != out {
		t.Fatalf("extend: %v", r)
	}
	if b, err := os.ReadFile(paths[0]); err != nil || len(b) < 8 || string(b[4:8]) != "ftyp" {
		t.Errorf("%s: %d bytes (%v), want an MP4 file", paths[0], len(b), err)
	}
	xid := strings.TrimSuffix(filepath.Base(paths[0]), ".mp4")
	if want := "Started " + xid + ": " + strconv.Itoa(q.CreditsRequired) + " credits"; !strings.Contains(r.stderr, want) {
		t.Errorf("extend's stderr lacks %q: %v", want, r)
	}
	if st := run("status", xid); !strings.Contains(squash(st.stdout), "Type: video-extension") {
		t.Errorf("status of the extension: %v", st)
	}
	if n := fake.Accepted("and then it runs"); n != 1 {
		t.Errorf("Google was asked for the extension %d times, want once", n)
	}

	// Refusals.
	balance := e.Balance(t, k.AccountID)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "x", "--reference", ref, "--reference", ref, "--reference", ref, "--reference", ref}, "at most 3 reference images"},
		{[]string{"generate", "x", "--reference", ref, "--image", ref}, "--reference goes with a prompt alone"},
		{[]string{"quote", "x", "--reference", filepath.Join(t.TempDir(), "gone.png")}, "no such file, nor a direct upload's id"},
		{[]string{"extend", s.TaskID}, "accepts 2 arg(s)"},
		{[]string{"extend", s.TaskID, "x", "--model", "lite"}, "unknown flag: --model"},
		{[]string{"extend", "gen_1767225600000_unknown001", "x"}, "no such task in this account"},
		{[]string{"quote", "extend", "gen_1767225600000_unknown001", "x"}, "no such task in this account"},
		{[]string{"generate", "x", "--model", "lite", "--reference", ref}, "invalid request: model \"gen-3.1-lite-generate-001\" takes no reference images (referenceImages)"},
	} {
		if r := run(c.args...); r.code != exitError || !strings.Contains(r.stderr, c.want) {
			t.Errorf("gen %s: %v\nwant exit 1 saying %q", strings.Join(c.args, " "), r, c.want)
		}
	}
	if got := e.Balance(t, k.AccountID); got != balance {
		t.Errorf("balance %d after the refusals, want %d", got, balance)
	}
}
