package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/wire/taskview"
)

// History page bounds (infra/docs/contract.md).
const (
	defaultHistoryLimit = 20
	maxHistoryLimit     = 100
)

func (a *API) history(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", defaultHistoryLimit, 1, maxHistoryLimit)
	if err != nil {
		return err
	}
	skip, err := intParam(q, "skip", 0, 0, -1)
	if err != nil {
		return err
	}
	var status task.Status
	if vs, ok := q["status"]; ok {
		s, ok := task.ParseStatus(vs[0])
		if len(vs) > 1 || !ok {
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "status", Value: vs[0],
				Message: "status must be one of pending, processing, completed, failed."}
		}
		status = s
	}

	var after store.TaskCursor
	pos, ok, err := a.openCursor(r.Context(), q, listHistory, c, "cursor must be a pagination.nextCursor this endpoint returned.")
	if err != nil {
		return err
	}
	if ok {
		cur, ok := parsePosition(pos)
		if !ok { // sealed by this server: never
			return fmt.Errorf("history cursor holds %q", pos)
		}
		after = cur
	}

	// One task more than the page tells whether another page follows,
	// which a cursor's position in the total cannot.
	tasks, total, err := a.svc.History(r.Context(), *c, store.TaskQuery{Status: status, After: after, Skip: skip, Limit: limit + 1})
	if err != nil {
		return err
	}
	more := len(tasks) > limit
	tasks = tasks[:min(len(tasks), limit)]
	hasMore := skip+len(tasks) < total
	if !after.IsZero() {
		hasMore = more
	}
	page := wire.Pagination{Total: total, Limit: limit, Skip: skip, HasMore: hasMore}
	if more {
		next, err := a.sealCursor(r.Context(), listHistory, c, formatPosition(store.CursorOf(tasks[len(tasks)-1])))
		if err != nil {
			return err
		}
		page.NextCursor = next
	}
	items := make([]json.RawMessage, len(tasks))
	for i := range tasks {
		items[i] = a.items.item(&tasks[i])
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer putBody(buf)
	encodeHistory(buf, items, page)
	writeBody(w, http.StatusOK, buf.Bytes())
	return nil
}

// encodeHistory writes the bytes writeJSON would write for a
// wire.HistoryPage of items and page, the items as they are: encoding/json
// would check and compact each cached item again, which was a third of
// a page's CPU, to the same bytes (itemCache's are compact already).
func encodeHistory(buf *bytes.Buffer, items []json.RawMessage, page wire.Pagination) {
	buf.WriteString(`{"success":true,"videos":[`)
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it)
	}
	buf.WriteString(`],"pagination":`)
	appendPagination(buf, page)
	buf.WriteString("}\n")
}

// appendPagination writes page as encoding/json would (the field order
// and omitempty of wire.Pagination), by hand: the encoder was a twelfth
// of a cached page's work. A cursor with a byte JSON would escape (never
// one the Sealer made: base64url) goes through the encoder.
func appendPagination(buf *bytes.Buffer, page wire.Pagination) {
	b := buf.AvailableBuffer()
	b = append(b, `{"total":`...)
	b = strconv.AppendInt(b, int64(page.Total), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(page.Limit), 10)
	b = append(b, `,"skip":`...)
	b = strconv.AppendInt(b, int64(page.Skip), 10)
	b = append(b, `,"hasMore":`...)
	b = strconv.AppendBool(b, page.HasMore)
	if page.NextCursor != "" {
		b = append(b, `,"nextCursor":`...)
		if plainJSON(page.NextCursor) {
			b = append(b, '"')
			b = append(b, page.NextCursor...)
			b = append(b, '"')
		} else {
			var s bytes.Buffer
			encodeJSON(&s, page.NextCursor)
			b = append(b, bytes.TrimSuffix(s.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '}')
	buf.Write(b)
}

// plainJSON reports whether s is its own JSON string body: printable
// ASCII with no quote or backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// itemCacheMax bounds the items kept; past it the one added longest ago
// goes, which costs one encoding when it is asked for again. Reads only
// Peek: a page's twenty lookups then share the LRU's lock rather than
// queue for its exclusive one, which a Get takes to move the item
// (issue 38's profile of history page 1).
const itemCacheMax = 10000

// itemCache keeps each history item's JSON. An item is a function of the
// task's fields that never change and of its status: a task's item in a
// given status is always the same bytes (a finished task's outcome is
// set once, with its status), so a page of tasks seen before encodes
// nothing but its envelope. Invalidation: none is needed, since the key
// holds the status, the one thing of an item that changes.
type itemCache struct {
	m *lru.Cache[itemKey, json.RawMessage]
}

type itemKey struct {
	id     string
	status task.Status
}

func newItemCache() itemCache {
	m, _ := lru.New[itemKey, json.RawMessage](itemCacheMax) // a positive size: New cannot fail
	return itemCache{m}
}

// item returns t's history item, encoded as writeJSON encodes (no HTML
// escaping), without the encoder's newline.
// t is read only: a page's tasks may be the store's (store.Store.Tasks).
func (c itemCache) item(t *task.Task) json.RawMessage {
	k := itemKey{t.ID, t.Status}
	if b, ok := c.m.Peek(k); ok {
		return b
	}
	var buf bytes.Buffer
	encodeJSON(&buf, taskview.History(*t))
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	c.m.Add(k, b)
	return b
}

// A history position is "<createdAt unix ms>.<task id>", sealed into the
// cursor (cursors.go): clients see neither, and the query stays the
// caller's account's whatever a cursor held.
func formatPosition(c store.TaskCursor) string {
	return strconv.FormatInt(c.CreatedAt.UnixMilli(), 10) + "." + c.ID
}

// maxCursorID bounds the id in a position: task ids are far shorter.
const maxCursorID = 64

func parsePosition(s string) (store.TaskCursor, bool) {
	msPart, id, ok := strings.Cut(s, ".")
	created, err := strconv.ParseInt(msPart, 10, 64)
	if !ok || err != nil || created < 0 || id == "" || len(id) > maxCursorID || !utf8.ValidString(id) {
		return store.TaskCursor{}, false
	}
	return store.TaskCursor{CreatedAt: time.UnixMilli(created).UTC(), ID: id}, true
}

// intParam reads an optional integer query parameter in [min, max] (max
// < 0: unbounded). Anything else, a repeated parameter included, is a 400
// naming it.
func intParam(q url.Values, name string, def, min, max int) (int, error) {
	vs, ok := q[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || len(vs) > 1 || n < min || (max >= 0 && n > max) {
		msg := fmt.Sprintf("%s must be an integer of at least %d.", name, min)
		if max >= 0 {
			msg = fmt.Sprintf("%s must be an integer from %d to %d.", name, min, max)
		}
		return 0, &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: name, Value: vs[0], Message: msg}
	}
	return n, nil
}
