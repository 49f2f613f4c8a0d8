package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// Idempotency-Key (infra/docs/contract.md, "Extensions"): a start sent again
// with the same key and the same request within service.IdempotencyTTL answers
// what the first one answered, without a second task or charge; the same
// key with another request is a 409. Keys belong to the account, not to
// the API key, so two keys of one account share them.
const (
	headerIdempotencyKey = "Idempotency-Key"
	// headerReplayed marks an answer that replays an earlier start.
	headerReplayed    = "Idempotent-Replayed"
	maxIdempotencyKey = 255
)

// idempotencyKey returns the request's Idempotency-Key, or "" when it has
// none. A key is 1 to 255 printable ASCII characters (space to tilde), sent
// once; anything else is a 400 naming the header.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values(headerIdempotencyKey)
	if len(vals) == 0 {
		return "", nil
	}
	bad := func(msg string) error {
		return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: headerIdempotencyKey, Message: msg}
	}
	if len(vals) > 1 {
		return "", bad("Send one Idempotency-Key header.")
	}
	k := vals[0]
	if k == "" || len(k) > maxIdempotencyKey {
		return "", bad(fmt.Sprintf("The Idempotency-Key must be 1 to %d characters long.", maxIdempotencyKey))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", bad("The Idempotency-Key may hold only printable ASCII characters.")
		}
	}
	return k, nil
}

// requestHash identifies a start request for its Idempotency-Key: SHA-256
// over a version tag, the endpoint, the parameter fields as sent (sorted
// by name; a JSON value in its canonical encoding, so that neither the
// order of the fields nor white space matter, and a null field counts as
// absent, as it does for the validator) and each image (its field, file
// name, size and the SHA-256 of its bytes, computed while it streamed).
// Every string is length-prefixed, so no two requests share an encoding.
type requestHash struct{ h hash.Hash }

func newRequestHash(endpoint string) *requestHash {
	rh := &requestHash{h: sha256.New()}
	rh.write("gen-idempotency/v1")
	rh.write(endpoint)
	return rh
}

func (rh *requestHash) write(s string) {
	io.WriteString(rh.h, strconv.Itoa(len(s)))
	io.WriteString(rh.h, ":")
	io.WriteString(rh.h, s)
}

// fields adds the parameter fields.
func (rh *requestHash) fields(fields map[string]string) {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	rh.write("fields")
	rh.write(strconv.Itoa(len(names)))
	for _, name := range names {
		rh.write(name)
		rh.write(fields[name])
	}
}

// images adds the uploaded images, given their digests by role.
func (rh *requestHash) images(inputs []task.Input, digests map[string]string) {
	ins := slices.Clone(inputs)
	slices.SortFunc(ins, func(a, b task.Input) int {
		switch {
		case a.Role < b.Role:
			return -1
		case a.Role > b.Role:
			return 1
		}
		return 0
	})
	rh.write("images")
	rh.write(strconv.Itoa(len(ins)))
	for _, in := range ins {
		rh.write(in.Role)
		rh.write(in.OriginalName)
		rh.write(strconv.FormatInt(in.Size, 10))
		rh.write(digests[in.Role])
	}
}

func (rh *requestHash) sum() string { return hex.EncodeToString(rh.h.Sum(nil)) }

// canonicalJSON returns the fields of a JSON object body, each value in
// its canonical encoding; null fields are left out. The body has passed
// params.ParseJSON, so it is one JSON object.
func canonicalJSON(body []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("canonical form of the body: %w", err)
	}
	out := make(map[string]string, len(raw))
	for name, v := range raw {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var val any
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("canonical form of %q: %w", name, err)
		}
		if val == nil {
			continue
		}
		b, err := json.Marshal(val)
		if err != nil {
			return nil, fmt.Errorf("canonical form of %q: %w", name, err)
		}
		out[name] = string(b)
	}
	return out, nil
}
