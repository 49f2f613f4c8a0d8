package fsblob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/genvideo/gen/shared/wire"
	lru "github.com/hashicorp/golang-lru/v2"
)

// PathPrefix is where the Handler expects to be mounted.
const PathPrefix = "/files/"

var errNotDir = syscall.ENOTDIR

// SignURL returns a URL that downloads the object under key until expires:
// <baseURL>/files/<key>?expires=<unix seconds>&signature=<hex HMAC-SHA256>.
// The object need not exist yet.
func (s *Store) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	if err := checkKey(key); err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	exp := expires.Unix()
	if u, ok := s.links.Get(linkKey{key, exp}); ok {
		return u, nil
	}
	// Valid keys hold only characters that need no escaping in a path.
	u := fmt.Sprintf("%s%s%s?expires=%d&signature=%s", s.baseURL, PathPrefix, key, exp, s.sign(key, exp))
	s.links.Add(linkKey{key, exp}, u)
	return u, nil
}

// linkCacheMax bounds the links kept; past it the least recently used
// goes, which costs one HMAC when it is asked for again.
const linkCacheMax = 10000

// linkCache keeps the links SignURL made. A link is a pure function of
// the key, its expiry and the secret, and the API asks for the same
// expiry on every poll of a task (its completion plus the links'
// lifetime), so a poll of a finished task signs nothing. Invalidation:
// none is needed, as nothing a link is made of changes under it (a new
// secret is a new Store).
type linkCache = lru.Cache[linkKey, string]

type linkKey struct {
	key string
	exp int64
}

func newLinkCache() *linkCache {
	c, _ := lru.New[linkKey, string](linkCacheMax) // a positive size: New cannot fail
	return c
}

// sign is the hex HMAC of a key and expiry. The key cannot contain a
// newline, so the message is unambiguous.
func (s *Store) sign(key string, expires int64) string {
	mac := hmac.New(sha256.New, s.secret)
	fmt.Fprintf(mac, "fsblob/v1\n%s\n%d", key, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler serves signed URLs: GET and HEAD of /files/<key>, with Range
// support. A link that is not signed, signed for another key or expiry,
// or past its expiry is answered 403; a valid link to a missing object
// 404. Error bodies are the service's JSON error form.
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(s.serve)
}

func (s *Store) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "use GET or HEAD to download a file")
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such route")
		return
	}
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	got, herr := hex.DecodeString(q.Get("signature"))
	if !ValidKey(key) || err != nil || herr != nil || len(q["expires"]) != 1 || len(q["signature"]) != 1 {
		writeError(w, http.StatusForbidden, "FORBIDDEN", "this download link is invalid")
		return
	}
	want, _ := hex.DecodeString(s.sign(key, exp))
	if !hmac.Equal(got, want) {
		writeError(w, http.StatusForbidden, "FORBIDDEN", "this download link is invalid")
		return
	}
	expires := time.Unix(exp, 0)
	now := s.now()
	if !now.Before(expires) {
		writeError(w, http.StatusForbidden, "FORBIDDEN",
			fmt.Sprintf("this download link expired at %s; request a new one", expires.UTC().Format(time.RFC3339)))
		return
	}

	f, contentType, err := s.open(key)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			writeError(w, http.StatusNotFound, "NOT_FOUND", "the file does not exist (any more)")
			return
		}
		writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "the file could not be read")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "the file could not be read")
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Caches may keep the file no longer than the link lives.
	h.Set("Cache-Control", fmt.Sprintf("private, max-age=%d", int(expires.Sub(now)/time.Second)))
	http.ServeContent(w, r, key, st.ModTime(), f)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(wire.ErrorBody{Error: code, Message: message})
}
