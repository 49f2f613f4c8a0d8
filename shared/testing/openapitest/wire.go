package openapitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/genvideo/gen/shared/openaiapi"
	"github.com/genvideo/gen/shared/strictjson"
	"github.com/genvideo/gen/shared/wire"
)

// answers are the Go types of the document's answers: per operation (by
// operationId) and status, a function that returns a new value of the
// type the body decodes into. The contract's are shared/wire's, which the
// service writes and the Go client reads; the OpenAI facade's are
// shared/openaiapi's. Error statuses are not listed: they are
// wire.ErrorBody, wire.RateLimitBody for a 429, or OpenAI's envelope
// under /openai/v1 (answerType). A status with no JSON body maps to nil.
var answers = map[string]map[int]func() any{
	"textToVideo":           {http.StatusAccepted: newOf[wire.Started]},
	"imageToVideo":          {http.StatusAccepted: newOf[wire.Started]},
	"firstLastFrame":        {http.StatusAccepted: newOf[wire.Started]},
	"extendVideo":           {http.StatusAccepted: newOf[wire.Started]},
	"getStatus":             {http.StatusOK: newOf[wire.Task]},
	"getStatusEvents":       {http.StatusOK: newOf[wire.Task]}, // each event's data
	"cancelTask":            {http.StatusOK: newOf[wire.Task]},
	"deleteTask":            {http.StatusNoContent: nil},
	"getDownload":           {http.StatusOK: newOf[wire.Download]},
	"getHistory":            {http.StatusOK: newOf[wire.HistoryPage]},
	"listModels":            {http.StatusOK: newOf[wire.ModelList]},
	"getCredits":            {http.StatusOK: newOf[wire.Credits]},
	"setSpendingCaps":       {http.StatusOK: newOf[wire.Credits]},
	"quoteTextToVideo":      {http.StatusOK: newOf[wire.Quote]},
	"quoteImageToVideo":     {http.StatusOK: newOf[wire.Quote]},
	"quoteFirstLastFrame":   {http.StatusOK: newOf[wire.Quote]},
	"quoteExtendVideo":      {http.StatusOK: newOf[wire.Quote]},
	"createUpload":          {http.StatusCreated: newOf[wire.Upload]},
	"createWebhook":         {http.StatusCreated: newOf[wire.WebhookCreated]},
	"listWebhooks":          {http.StatusOK: newOf[wire.WebhookList]},
	"getWebhookSecret":      {http.StatusOK: newOf[wire.WebhookSecret]},
	"deleteWebhook":         {http.StatusOK: newOf[wire.WebhookDeleted]},
	"listWebhookDeliveries": {http.StatusOK: newOf[wire.DeliveriesPage]},
	"replayWebhookDelivery": {http.StatusAccepted: newOf[wire.DeliveryReplayed]},
	// The document itself and the page that shows it are no answer of
	// the contract.
	"getOpenAPI": {http.StatusOK: nil},
	"getDocs":    {http.StatusOK: nil},

	"openaiCreateVideo":          {http.StatusOK: newOf[openaiapi.Video]},
	"openaiExtendVideo":          {http.StatusOK: newOf[openaiapi.Video]},
	"openaiRetrieveVideo":        {http.StatusOK: newOf[openaiapi.Video]},
	"openaiListVideos":           {http.StatusOK: newOf[openaiapi.List]},
	"openaiDeleteVideo":          {http.StatusOK: newOf[openaiapi.Deleted]},
	"openaiDownloadVideoContent": {http.StatusFound: nil},
}

// requests are the Go types of the document's JSON request bodies, per
// operation: what the Go client sends. (The service reads a start field
// by field, shared/params; the OpenAI facade's bodies are OpenAI's.)
var requests = map[string]func() any{
	"textToVideo":      newOf[wire.StartRequest],
	"quoteTextToVideo": newOf[wire.StartRequest],
	"extendVideo":      newOf[wire.ExtendRequest],
	"quoteExtendVideo": newOf[wire.ExtendRequest],
	"setSpendingCaps":  newOf[wire.CapsUpdate],
	"createUpload":     newOf[wire.UploadRequest],
	"createWebhook":    newOf[wire.WebhookRequest],
}

func newOf[T any]() any { return new(T) }

// answerType returns a new value of the type the answer of operation op
// (its operationId, "" for a path the document does not list) at path
// with status decodes into; nil, true for an answer without a JSON body;
// false when no type is known.
func answerType(op, path string, status int) (any, bool) {
	if status >= 400 {
		switch {
		case strings.Contains(path, openaiapi.Base+"/"):
			return new(openaiapi.ErrorBody), true
		case status == http.StatusTooManyRequests:
			return new(wire.RateLimitBody), true
		}
		return new(wire.ErrorBody), true
	}
	f, ok := answers[op][status]
	if !ok {
		return nil, false
	}
	if f == nil {
		return nil, true
	}
	return f(), true
}

// decode decodes body into v refusing every member v has no field for,
// as the OpenAPI document's additionalProperties: false does. The
// contract's shapes are decoded by shared/strictjson, which also refuses
// a member named in another case, one given twice, and null (the
// contract writes none); OpenAI's, which hold null, with encoding/json's
// DisallowUnknownFields.
func decode(body []byte, v any) error {
	if !openAIType(v) {
		return strictjson.Unmarshal(body, v)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more after the JSON value")
	}
	return nil
}

func openAIType(v any) bool {
	switch v.(type) {
	case *openaiapi.Video, *openaiapi.List, *openaiapi.Deleted, *openaiapi.ErrorBody:
		return true
	}
	return false
}

// decodeAnswer decodes the answer to req into the Go type of its
// operation and status (answerType) as decode does: each event of an
// event stream, any other JSON body whole. It returns an error for a JSON
// answer of no known type.
func (v *Validator) decodeAnswer(req *http.Request, status int, header http.Header, body []byte) error {
	if req.Method == http.MethodHead {
		return nil
	}
	route, _, err := v.route(req)
	if err != nil {
		return err
	}
	op := route.Operation.OperationID
	if err := decodeBody(op, req, status, header, body); err != nil {
		return err
	}
	decoded.Lock()
	defer decoded.Unlock()
	if decoded.m == nil {
		decoded.m = map[string]bool{}
	}
	decoded.m[answerKey(op, status)] = true
	return nil
}

// decoded are the answers decodeAnswer accepted in this process, by
// answerKey.
var decoded struct {
	sync.Mutex
	m map[string]bool
}

func answerKey(op string, status int) string { return op + " " + strconv.Itoa(status) }

// Undecoded lists the success answers ("operationId status") of the
// document's operations on paths under prefix that no response checked
// in this process gave: for a suite that means to receive, and so decode,
// every one of them.
func Undecoded(prefix string) ([]string, error) {
	doc, err := Doc()
	if err != nil {
		return nil, err
	}
	decoded.Lock()
	defer decoded.Unlock()
	var out []string
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err == nil && status < 400 && !decoded.m[answerKey(op.OperationID, status)] {
					out = append(out, answerKey(op.OperationID, status))
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// decodeBody is decodeAnswer's work on the body of an answer to op.
func decodeBody(op string, req *http.Request, status int, header http.Header, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	target, ok := answerType(op, req.URL.Path, status)
	if !ok {
		return fmt.Errorf("%s %s -> %d: no Go type for operation %q's answer (openapitest.answers)", req.Method, req.URL.Path, status, op)
	}
	if target == nil {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	switch mt {
	case "application/json":
		if err := decode(body, target); err != nil {
			return fmt.Errorf("%s %s -> %d: %T: %w", req.Method, req.URL.Path, status, target, err)
		}
	case "text/event-stream":
		for i, data := range eventData(body) {
			target, _ := answerType(op, req.URL.Path, status)
			if err := decode(data, target); err != nil {
				return fmt.Errorf("%s %s -> %d: event %d: %T: %w", req.Method, req.URL.Path, status, i, target, err)
			}
		}
	}
	return nil
}

// eventData is the data of each event of a Server-Sent Events stream.
func eventData(stream []byte) [][]byte {
	var out [][]byte
	var data []byte
	has := false
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, len(stream)+1)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has {
				out = append(out, data)
			}
			data, has = nil, false
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			if has {
				data = append(data, '\n')
			}
			data, has = append(data, strings.TrimPrefix(v, " ")...), true
		}
	}
	if has {
		out = append(out, data)
	}
	return out
}
