package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/genvideo/gen/shared/openapi"
	"github.com/genvideo/gen/shared/openapi/internal/yamljson"
)

// The embedded openapi.json is generated from openapi.yaml, which is
// what people edit: a change to the YAML without a new JSON would serve
// the old document.
func TestJSONIsGeneratedFromTheYAML(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := yamljson.Convert(src)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !bytes.Equal(openapi.JSON(), want) {
		t.Fatal("openapi.json is stale: it is not openapi.yaml converted; run go generate ./shared/openapi")
	}
}

// same document from both.
func TestJSONIsTheYAML(t *testing.T) {
	fromYAML, err := openapi3.NewLoader().LoadFromData(yamlSource(t))
	if err != nil {
		t.Fatalf("load YAML: %v", err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatalf("load JSON: %v", err)
	}
	a, _ := json.Marshal(fromYAML)
	b, _ := json.Marshal(fromJSON)
	if !bytes.Equal(a, b) || len(a) < 1000 {
		t.Errorf("the document read from JSON() differs from the one read from YAML() (%d and %d bytes)", len(b), len(a))
	}
	if !strings.Contains(string(openapi.JSON()), `"maximum": 4294967295`) {
		t.Error("JSON() lost the seed's maximum 4294967295 (a float conversion?)")
	}
}

// yamlSource is openapi.yaml, the document as written.
func yamlSource(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
