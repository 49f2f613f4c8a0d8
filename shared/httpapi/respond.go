package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/wire"
)

// formatTime is t as the contract writes a timestamp (wire.TimeLayout),
// for the headers and messages that carry one.
func formatTime(t time.Time) string { return t.UTC().Format(wire.TimeLayout) }

// DataContentSecurityPolicy is the policy of an answer that is data, not
// a page (every JSON body, the OpenAPI document): a browser that opens
// one on the API's origin, where the playground keeps a key, runs and
// loads nothing from it, and no site may frame it (issue 20).
const DataContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

// writeJSON writes v with the given status. Responses carry credits and
// signed URLs, so nothing may cache them.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bodies.Get().(*bytes.Buffer)
	defer putBody(buf)
	encodeJSON(buf, v)
	writeBody(w, status, buf.Bytes())
}

// encodeJSON appends v's JSON to buf as every answer has it: without
// HTML escaping, ending in the encoder's newline.
func encodeJSON(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every body is built from plain structs and maps; this is a bug.
		panic("httpapi: encode response: " + err.Error())
	}
}

// writeBody writes body, JSON already encoded, with status and the
// headers of every JSON answer.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// The fixed values are shared slices, set by their canonical names:
	// Header.Set would make each of them anew on every answer. One value
	// each (capacity 1), so a later Add makes its own.
	h["Content-Type"] = jsonHeaders.contentType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h["Cache-Control"] = jsonHeaders.cacheControl
	h["X-Content-Type-Options"] = jsonHeaders.noSniff
	h["Content-Security-Policy"] = jsonHeaders.csp
	w.WriteHeader(status)
	w.Write(body)
}

// jsonHeaders are the fixed header values of every JSON answer.
var jsonHeaders = struct{ contentType, cacheControl, noSniff, csp []string }{
	contentType:  []string{"application/json; charset=utf-8"},
	cacheControl: []string{"no-store"},
	noSniff:      []string{"nosniff"},
	csp:          []string{DataContentSecurityPolicy},
}

// bodies are the buffers writeJSON encodes into, reused across requests
// so that a poll allocates no body buffer of its own.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBody gives buf back to bodies, unless it grew past what a page of
// history needs: one huge answer should not stay in memory.
func putBody(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	bodies.Put(buf)
}

// seconds renders d as whole seconds, rounded up and at least 1, for
// Retry-After.
func seconds(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
