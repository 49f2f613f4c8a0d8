package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/strictjson"
	"github.com/genvideo/gen/shared/wire"
)

// definition is one tool: its description and schemas, and its handler.
type definition struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// schemas are a type's JSON Schema and its resolved form, made once per
// process: a remote server is built for every request.
type schemas struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

var schemaCache sync.Map // reflect.Type's name -> schemas

// schemaOptions describes the contract's timestamps (wire.Time, which
// embeds a time.Time) as the strings they are written as.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[wire.Time](): {Type: "string", Format: "date-time"},
}}

func schemaOf[T any]() schemas {
	var zero T
	key := fmt.Sprintf("%T", zero)
	if s, ok := schemaCache.Load(key); ok {
		return s.(schemas)
	}
	s, err := jsonschema.For[T](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", key, err))
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", key, err))
	}
	schemaCache.Store(key, schemas{s, r})
	return schemas{s, r}
}

// result is what a handler answers: its output, and content beside the
// output's JSON (links to the videos).
type result[Out any] struct {
	out   Out
	links []mcp.Content
}

// define makes a tool of a handler. It is the SDK's mcp.AddTool but for
// two things the contract needs: the input is decoded strictly, with
// the contract's VALIDATION_ERROR naming the member at fault (the SDK's
// own schema check answers in its own words); and a refusal (any error
// of h, which refusalOf reads) is a tool error whose structured content
// is {"error": ...}, which the output schema allows.
func define[In, Out any](tool mcp.Tool, h func(ctx context.Context, req *mcp.CallToolRequest, in In) (result[Out], error), refused func(*Refusal) Out) definition {
	in, out := schemaOf[In](), schemaOf[Out]()
	tool.InputSchema, tool.OutputSchema = in.schema, out.schema
	handler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var input In
		if err := decode(req.Params.Arguments, &input); err != nil {
			return refusal(refused, err)
		}
		res, err := h(ctx, req, input)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				// The caller cancelled the call: no one reads an answer.
				return nil, err
			}
			return refusal(refused, err)
		}
		b, err := structured(res.out, out.resolved)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", tool.Name, err)
		}
		// The JSON as text too, for hosts that read no structured content
		// (the specification's advice), then the links.
		content := append([]mcp.Content{&mcp.TextContent{Text: string(b)}}, res.links...)
		return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(b)}, nil
	}
	return definition{tool: &tool, handler: handler}
}

// refusal is the tool error of err.
func refusal[Out any](refused func(*Refusal) Out, err error) (*mcp.CallToolResult, error) {
	r := refusalOf(err)
	b, err := json.Marshal(refused(r))
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: r.text()}},
		StructuredContent: json.RawMessage(b)}, nil
}

// structured is out as JSON, checked against its schema: an output the
// schema does not describe would be refused by the host's SDK, so it is
// a bug here, found by the tests.
func structured(out any, schema *jsonschema.Resolved) ([]byte, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	if err := schema.Validate(v); err != nil {
		return nil, fmt.Errorf("output does not match its schema: %w", err)
	}
	return b, nil
}

// inputError is an input the tool refuses before calling the service.
type inputError struct {
	field, message string
}

func (e *inputError) Error() string { return e.message }

// decode reads a tool's arguments into v: strictly, a null member being
// absent.
func decode(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = []byte("{}")
	}
	// The arguments as sent: one JSON object, no member repeated at any
	// depth (decoding into a map would keep the last).
	var raw any
	if err := strictjson.Unmarshal(args, &raw); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return &inputError{field: se.Field(), message: "arguments: " + se.Error()}
		}
		return &inputError{message: "arguments: " + err.Error()}
	}
	if _, ok := raw.(map[string]any); !ok {
		return &inputError{message: "the arguments must be a JSON object"}
	}
	// Null members are dropped where they are (the REST API's start takes
	// a null parameter as absent); strictjson refuses the rest of what is
	// ambiguous: an unknown member, or one of the wrong type.
	cleaned, err := json.Marshal(dropNulls(raw))
	if err != nil {
		return err
	}
	if err := strictjson.Unmarshal(cleaned, v); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return &inputError{field: se.Field(), message: se.Error()}
		}
		return &inputError{message: err.Error()}
	}
	return nil
}

// dropNulls removes the null members of every object in v.
func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if m == nil {
				delete(v, k)
				continue
			}
			v[k] = dropNulls(m)
		}
	case []any:
		for i, m := range v {
			v[i] = dropNulls(m)
		}
	}
	return v
}

// refusalOf is the refusal err stands for: the REST API's error answer
// (*client.Error), an input refused before it was sent, or a service
// that could not be reached.
func refusalOf(err error) *Refusal {
	var apiErr *client.Error
	var in *inputError
	switch {
	case errors.As(err, &apiErr):
		r := &Refusal{Status: apiErr.Status, Code: apiErr.Code, Message: apiErr.Message, Field: apiErr.Field,
			Required: apiErr.Required, Available: apiErr.Available, Details: apiErr.Details}
		if apiErr.RetryAfter > 0 {
			r.RetryAfterSeconds = int((apiErr.RetryAfter + 999_999_999) / 1_000_000_000)
		}
		if r.Code == "" {
			// Not the service's answer (a proxy's page): its status says
			// what it was.
			r.Code = codeOfStatus(apiErr.Status)
		}
		return r
	case errors.As(err, &in):
		return &Refusal{Status: 400, Code: client.CodeValidation, Message: in.message, Field: in.field}
	}
	// The service was not reached, or its answer could not be read.
	return &Refusal{Code: client.CodeUnavailable, Message: "The gen service could not be reached: " + err.Error()}
}

// codeOfStatus is the contract's code of an answer without one.
func codeOfStatus(status int) string {
	switch {
	case status == 401:
		return client.CodeUnauthorized
	case status == 404:
		return client.CodeNotFound
	case status == 413:
		return client.CodeFileTooLarge
	case status == 429:
		return client.CodeRateLimit
	case status >= 500:
		return client.CodeUnavailable
	}
	return client.CodeValidation
}

// text is the refusal in a sentence for the agent.
func (r *Refusal) text() string {
	var b strings.Builder
	b.WriteString("Refused: " + r.Code)
	if r.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", r.Status)
	}
	if r.Field != "" {
		b.WriteString(", field " + r.Field)
	}
	if r.Message != "" {
		b.WriteString(": " + r.Message)
	}
	if r.RetryAfterSeconds > 0 {
		fmt.Fprintf(&b, " Retry after %d seconds.", r.RetryAfterSeconds)
	}
	return b.String()
}
