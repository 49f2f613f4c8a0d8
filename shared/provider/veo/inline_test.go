package veo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/provider/providerhttp"
)

// TestReadOperation: an answer read with a spool decodes as encoding/json
// would decode it whole, each inline video in a file; an answer cut short
// is waited out (busy), a video that is not base64 is not.
func TestReadOperation(t *testing.T) {
	const aGIF = "R0lGODlh" // "GIF89a"
	for _, c := range []struct {
		name, answer string
		videos       []string // the files' contents, by spoolRef
		busy, failed bool
	}{
		{name: "two videos", answer: `{"name":"op","done":true,"response":{"videos":[{"bytesBase64Encoded":"` + aGIF + `","mimeType":"video/mp4"},{"bytesBase64Encoded" : "YWI="}]}}`,
			videos: []string{"GIF89a", "ab"}},
		{name: "escaped slashes and a \\u escape", answer: `{"done":true,"response":{"videos":[{"bytesBase64Encoded":"Pz8\/\u0050w=="}]}}`,
			videos: []string{"????"}},
		{name: "gemini", answer: `{"done":true,"response":{"generateVideoResponse":{"generatedSamples":[{"video":{"encodedVideo":"` + aGIF + `"}}]}}}`,
			videos: []string{"GIF89a"}},
		{name: "the key's name as a value, and in a key", answer: `{"name":"encodedVideo","done":true,"response":{"raiMediaFilteredReasons":["bytesBase64Encoded", "a \"bytesBase64Encoded\":\"x"]}}`},
		{name: "not done", answer: `{"name":"op"}`},
		{name: "cut short in a video", answer: `{"done":true,"response":{"videos":[{"bytesBase64Encoded":"R0lG`, busy: true},
		{name: "cut short elsewhere", answer: `{"done":true,"response":{"videos":[{"bytesBase64Encoded":"R0lG"}`, busy: true},
		{name: "not JSON", answer: `<html>`, busy: true},
		{name: "not base64", answer: `{"done":true,"response":{"videos":[{"bytesBase64Encoded":"R0l*"}]}}`, failed: true},
		{name: "a \\u escape outside base64", answer: `{"done":true,"response":{"videos":[{"bytesBase64Encoded":"R0\u00e9G"}]}}`, failed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := &spool{dir: filepath.Join(t.TempDir(), "out")}
			var op, whole operation
			err := sp.readOperation(strings.NewReader(c.answer), 1<<20, "poll", &op)
			var busy *providerhttp.BusyError
			switch {
			case c.busy || c.failed:
				if err == nil || errors.As(err, &busy) != c.busy {
					t.Fatalf("readOperation = %v, want busy %v", err, c.busy)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			// The rest is what encoding/json reads of the whole answer.
			if err := whole.decode(c.answer); err != nil {
				t.Fatal(err)
			}
			if op.Name != whole.Name || op.Done != whole.Done || (op.Response == nil) != (whole.Response == nil) {
				t.Errorf("read %+v, want %+v", op, whole)
			}
			var refs []string
			if op.Response != nil {
				for _, v := range op.Response.Videos {
					refs = append(refs, v.BytesBase64Encoded)
				}
				if g := op.Response.GenerateVideoResponse; g != nil {
					for _, s := range g.GeneratedSamples {
						refs = append(refs, s.Video.EncodedVideo)
					}
				}
				if !slices.Equal(op.Response.RAIMediaFilteredReasons, whole.Response.RAIMediaFilteredReasons) {
					t.Errorf("reasons %q, want %q", op.Response.RAIMediaFilteredReasons, whole.Response.RAIMediaFilteredReasons)
				}
			}
			if len(refs) != len(c.videos) {
				t.Fatalf("%d videos, want %d", len(refs), len(c.videos))
			}
			for i, ref := range refs {
				path := filepath.Join(sp.dir, "video")
				if err := sp.take(ref, path); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(path); !bytes.Equal(b, []byte(c.videos[i])) {
					t.Errorf("video %d is %q, want %q", i, b, c.videos[i])
				}
			}
			// A poll that is not done touches no file system.
			if len(c.videos) == 0 {
				if _, err := os.Stat(sp.dir); !os.IsNotExist(err) {
					t.Errorf("%s made for an answer without videos (%v)", sp.dir, err)
				}
			}
		})
	}
}

// decode is how the answer was read before the spool: whole.
func (op *operation) decode(s string) error {
	return json.Unmarshal([]byte(s), op)
}
