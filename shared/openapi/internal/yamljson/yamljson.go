// Package yamljson turns the OpenAPI document from the YAML it is written
// in into the indented JSON the service serves. Only the generator of
// openapi.json (go generate ./shared/openapi) and the tests use it, so
// that no binary of the service links a YAML library.
package yamljson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/oasdiff/yaml"
)

// Convert returns src as JSON indented by two spaces, with a final
// newline. Numbers keep their digits (no float rounding), which the
// document's 32-bit bounds need.
func Convert(src []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSON(src)
	if err != nil {
		return nil, fmt.Errorf("openapi YAML to JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, j, "", "  "); err != nil {
		return nil, fmt.Errorf("indent openapi JSON: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
