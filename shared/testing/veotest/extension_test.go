package veotest_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/testing/veotest"
)

// TestExtensionOfItsOwnVideos: the fake extends, like the Gemini API,
// only the videos it made there, named by their file uri or sent as
// their bytes, while they are kept (2 days from their making or last
// reference) and up to 141 seconds long; Vertex AI's videos of up to 30
// seconds.
func TestExtensionOfItsOwnVideos(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv := httptest.NewServer(veotest.New(veotest.Config{Now: clock}))
	t.Cleanup(srv.Close)

	res := "720p"
	submit := func(api, instance string) (int, string, string) {
		t.Helper()
		url := srv.URL + "/v1beta/models/veo-3.1-generate-001:predictLongRunning"
		params := `{"durationSeconds":8,"resolution":"` + res + `","personGeneration":"allow_all"}`
		if api == "vertex" {
			url = srv.URL + "/v1/projects/p/locations/us-central1/publishers/google/models/veo-3.1-generate-001:predictLongRunning"
			params = `{"durationSeconds":8,"resolution":"720p","storageUri":"gs://b/out/"}`
		}
		res, err := http.Post(url, "application/json", strings.NewReader(`{"instances":[`+instance+`],"parameters":`+params+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var op struct {
			Name  string
			Error struct{ Message string }
		}
		json.NewDecoder(res.Body).Decode(&op)
		if op.Name == "" {
			return res.StatusCode, "", op.Error.Message
		}
		// Done at once (no delay): its video's address.
		var done map[string]any
		if api == "vertex" {
			res, err = http.Post(srv.URL+"/v1/projects/p/locations/us-central1/publishers/google/models/veo-3.1-generate-001:fetchPredictOperation",
				"application/json", strings.NewReader(`{"operationName":"`+op.Name+`"}`))
		} else {
			res, err = http.Get(srv.URL + "/v1beta/" + op.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		json.NewDecoder(res.Body).Decode(&done)
		b, _ := json.Marshal(done)
		var uri struct {
			Response struct {
				Videos                []struct{ GCSURI string }
				GenerateVideoResponse struct {
					GeneratedSamples []struct{ Video struct{ URI string } }
				}
			}
		}
		json.Unmarshal(b, &uri)
		if api == "vertex" {
			return 200, uri.Response.Videos[0].GCSURI, ""
		}
		return 200, uri.Response.GenerateVideoResponse.GeneratedSamples[0].Video.URI, ""
	}
	extend := func(field, value string) string {
		return `{"prompt":"and then","video":{"` + field + `":"` + value + `"}}`
	}

	_, first, _ := submit("gemini", `{"prompt":"x"}`)
	if status, _, msg := submit("gemini", extend("encodedVideo", base64.StdEncoding.EncodeToString([]byte("not Veo's")))); status != 400 ||
		!strings.Contains(msg, "only supports video extensions for Veo-generated videos") {
		t.Errorf("extension of a video Veo did not make: %d %q, want Google's 400", status, msg)
	}
	if status, _, msg := submit("gemini", extend("encodedVideo", base64.StdEncoding.EncodeToString(veotest.Video))); status != 200 {
		t.Errorf("extension of a video Veo made, as bytes: %d %q, want it taken", status, msg)
	}
	// 8 s, extended 19 times to 141 s, then once more to 148 s; no more.
	video := first
	for i := 1; i <= 20; i++ {
		status, next, msg := submit("gemini", extend("uri", video))
		if status != 200 {
			t.Fatalf("extension %d: %d %q, want it taken", i, status, msg)
		}
		video = next
	}
	if status, _, msg := submit("gemini", extend("uri", video)); status != 400 || !strings.Contains(msg, "148 seconds") {
		t.Errorf("a 21st extension: %d %q, want a 400 for a 148-second video", status, msg)
	}
	// Kept 2 days from its last reference.
	advance(veotest.Kept - time.Minute)
	if status, _, msg := submit("gemini", extend("uri", first)); status != 200 {
		t.Fatalf("extension within 2 days of the last reference: %d %q", status, msg)
	}
	advance(veotest.Kept + time.Minute)
	if status, _, _ := submit("gemini", extend("uri", first)); status != 400 {
		t.Errorf("extension of a video past its 2 days: %d, want 400", status)
	}

	// The Gemini API extends 720p videos only.
	res = "1080p"
	_, sharp, _ := submit("gemini", `{"prompt":"x"}`)
	res = "720p"
	if status, _, msg := submit("gemini", extend("uri", sharp)); status != 400 || !strings.Contains(msg, "1080p") {
		t.Errorf("extension of a 1080p video: %d %q, want a 400", status, msg)
	}

	_, gs, _ := submit("vertex", `{"prompt":"x"}`)
	for i, want := range []int{200, 200, 200, 200, 400} { // 8, 15, 22 and 29 s are extended; 36 s is past 30
		status, next, msg := submit("vertex", extend("gcsUri", gs))
		if status != want {
			t.Fatalf("Vertex AI extension %d: %d %q, want %d", i+1, status, msg, want)
		}
		gs = next
	}
}
