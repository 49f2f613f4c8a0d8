// Package openapi holds the OpenAPI 3.1 document of the service's public
// HTTP contract, which the service serves at /openapi.json. It is written
// in openapi.yaml; openapi.json, its JSON form, is generated from it
// (go generate ./shared/openapi) and committed, and that is what is
// embedded, so that serving it needs neither a YAML library nor an
// OpenAPI one. Checking exchanges against the document is for tests: the
// handler tests check every response they receive with openapitest's
// Validator, so that the document and the code cannot drift apart.
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

import _ "embed"

//go:generate go run ./internal/genjson openapi.yaml openapi.json

//go:embed openapi.json
var doc []byte

// JSON returns the document as JSON, the form served at /openapi.json.
// Callers must not modify it.
func JSON() []byte { return doc }
