// Package openapi holds the OpenAPI 3.1 document of the service's public
// HTTP contract (openapi.yaml, embedded) and checks HTTP exchanges against
// it. The service serves the document at /openapi.json; the handler tests
// check every response they receive with a Validator, so that the
// document and the code cannot drift apart.
//
// The document is OpenAPI 3.1 and uses JSON Schema 2020-12 keywords
// (const, if/then, not, dependentRequired), which kin-openapi v0.152.0
// loads, validates and applies. It keeps to the subset kin-openapi's
// request and response decoders handle: form schemas are plain objects
// (its multipart decoder ignores properties reached through allOf), file
// parts also carry the 3.0 "format: binary" next to 3.1's contentMediaType
// (it tells binary parts by the format alone), and header schemas name
// their type (a typeless const header decodes as null).
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"
)

//go:embed openapi.yaml
var source []byte

// YAML returns the document as written. Callers must not modify it.
func YAML() []byte { return source }

var jsonDoc = sync.OnceValues(func() ([]byte, error) {
	j, err := yaml.YAMLToJSON(source)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml to JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, j, "", "  "); err != nil {
		return nil, fmt.Errorf("indent openapi JSON: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
})

// JSON returns the document as JSON, the form served at /openapi.json.
// Callers must not modify it. The embedded YAML is checked by the tests,
// so a failure to convert it is a build defect: JSON panics.
func JSON() []byte {
	b, err := jsonDoc()
	if err != nil {
		panic("openapi: " + err.Error())
	}
	return b
}

var loaded = sync.OnceValues(func() (*openapi3.T, error) {
	b, err := jsonDoc()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("load openapi document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate openapi document: %w", err)
	}
	return doc, nil
})

// Doc returns the loaded and validated document (loaded once, from the
// same JSON that JSON returns). It is shared: callers must not modify it.
func Doc() (*openapi3.T, error) { return loaded() }
