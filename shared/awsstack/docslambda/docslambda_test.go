package docslambda

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/openapi"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// The docs handler needs none of the variables the other functions need,
// and logs at the level GEN_LOG_LEVEL sets.
func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	h, _, err := handler(lookup(map[string]string{awsstack.EnvLogLevel: "DEBUG"}), &buf) // a read that succeeded is logged at debug
	if err != nil {
		t.Fatalf("docs without any variable: %v", err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), openapi.JSON()) {
		t.Errorf("GET /openapi.json = %d with %d bytes, want 200 with the document", rec.Code, rec.Body.Len())
	}
	var line struct {
		Message, Path string
		Status        int
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line.Message != "request" || line.Path != "/openapi.json" || line.Status != 200 {
		t.Errorf("log %q, want one JSON request line for GET /openapi.json 200 (%v)", buf.String(), err)
	}

	buf.Reset()
	h, _, err = handler(lookup(map[string]string{awsstack.EnvLogLevel: "WARN"}), &buf)
	if err != nil {
		t.Fatal(err)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/docs", nil)) // a 405, logged at info
	if buf.Len() != 0 {
		t.Errorf("at WARN the request was logged: %s", buf.String())
	}
	if _, _, err := handler(lookup(map[string]string{awsstack.EnvLogLevel: "LOUD"}), &buf); err == nil || !strings.Contains(err.Error(), awsstack.EnvLogLevel) {
		t.Errorf("docs with %s=LOUD = %v, want an error naming it", awsstack.EnvLogLevel, err)
	}
}
