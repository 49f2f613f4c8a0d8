// Package gateway emulates an API Gateway REST API (proxy integrations
// to Lambda) from template.yaml's description of it (samtemplate): the
// stage prefix, the routes of the functions' Api events, the Lambda
// REQUEST/TOKEN authorizer with its result cached by identity for its
// TTL, the API key the authorizer names (ApiKeySourceType AUTHORIZER) or
// the X-API-Key header (HEADER) metered by the usage plans' throttle and
// quota, the stage's default throttling, binary media types, the 10 MB
// request cap, Lambda's 6 MB payload cap, the gateway responses with
// their status codes, headers and body templates, and the integrations
// that stream their response (ResponseTransferMode RESPONSE_STREAM).
package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/infra/awslocal/apikeys"
	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
)

// Limits of API Gateway REST APIs and Lambda.
const (
	// MaxRequestBytes is API Gateway's payload cap: 10 MB.
	MaxRequestBytes = 10 << 20
	// MaxLambdaRequestBytes and MaxLambdaResponseBytes are Lambda's caps
	// on a synchronous invocation ("6 MB"): Lambda refuses a larger event
	// with RequestEntityTooLargeException ("Request must be smaller than
	// 6291456 bytes"), which API Gateway answers 413, and a larger answer
	// ("Exceeded maximum allowed payload size (6291556 bytes)"), which
	// API Gateway answers 502. Sources: infra/docs/deploy.md, "The AWS
	// assembly on one machine".
	MaxLambdaRequestBytes  = 6291456
	MaxLambdaResponseBytes = 6291556
	// IntegrationTimeout is API Gateway's default (and, for REST APIs,
	// regional maximum without a quota increase) integration timeout.
	IntegrationTimeout = 29 * time.Second
	// MaxStreamDuration bounds a streamed response, and StreamIdleTimeout
	// the silence within one on a regional endpoint ("Stream the
	// integration response for your proxy integrations in API Gateway",
	// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html,
	// read 2026-11-26).
	MaxStreamDuration = 15 * time.Minute
	StreamIdleTimeout = 5 * time.Minute
	// maxPreludeBytes bounds the JSON prelude of a streamed response.
	maxPreludeBytes = 64 << 10
)

// Invoker runs a function.
type Invoker interface {
	Invoke(ctx context.Context, requestID string, event []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error)
}

// StreamInvoker also runs a function as InvokeWithResponseStream does,
// for a route whose integration streams (samtemplate.Route.Stream).
type StreamInvoker interface {
	Invoker
	InvokeStream(ctx context.Context, requestID string, event []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error)
}

// Route is a route bound to its function.
type Route struct {
	samtemplate.Route
	Function string // its logical id, for the logs
	Invoker  Invoker
}

// Config is what the gateway serves.
type Config struct {
	API         samtemplate.API
	Routes      []Route
	Authorizers map[string]Invoker // by authorizer name
	Keys        *apikeys.Gateway
	Logger      *slog.Logger
	// Account and APIID appear in ARNs and the request context.
	Account, APIID, Region string
}

// Gateway is the emulator, an http.Handler.
type Gateway struct {
	cfg Config

	mu      sync.Mutex
	cache   map[string]cached   // authorizer name + identity -> decision
	buckets map[string]*bucket  // key id -> its plan's throttle; "method M /path" -> the method's
	quotas  map[string]quotaUse // key id -> today's count
}

type cached struct {
	res     authResult
	expires time.Time
}

type quotaUse struct {
	period string
	n      int
}

// New returns the gateway.
func New(cfg Config) *Gateway {
	g := &Gateway{cfg: cfg, cache: map[string]cached{}, buckets: map[string]*bucket{}, quotas: map[string]quotaUse{}}
	return g
}

// ServeHTTP serves one request as API Gateway would.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newUUID()
	start := time.Now()
	log := g.cfg.Logger.With("component", "gateway", "requestId", reqID)
	w.Header().Set("X-Amzn-RequestId", reqID)
	status, errType := g.serve(w, r, reqID, log)
	log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status, "error", errType,
		"latencyMs", time.Since(start).Milliseconds())
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, reqID string, log *slog.Logger) (int, string) {
	stagePrefix := "/" + g.cfg.API.StageName
	if !strings.HasPrefix(r.URL.Path, stagePrefix+"/") && r.URL.Path != stagePrefix {
		return g.respond(w, "MISSING_AUTHENTICATION_TOKEN", http.StatusForbidden, "Missing Authentication Token", reqID)
	}
	resourcePath := strings.TrimPrefix(r.URL.Path, stagePrefix)
	if resourcePath == "" {
		resourcePath = "/"
	}
	if r.ContentLength > MaxRequestBytes {
		return g.respond(w, "REQUEST_TOO_LARGE", http.StatusRequestEntityTooLarge, "Request Too Long", reqID)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		return g.respond(w, "BAD_REQUEST_BODY", http.StatusBadRequest, "Invalid request body", reqID)
	}
	if len(body) > MaxRequestBytes {
		return g.respond(w, "REQUEST_TOO_LARGE", http.StatusRequestEntityTooLarge, "Request Too Long", reqID)
	}
	route, params := g.match(r.Method, resourcePath)
	if route == nil {
		return g.respond(w, "MISSING_AUTHENTICATION_TOKEN", http.StatusForbidden, "Missing Authentication Token", reqID)
	}
	if b := g.methodBucket(route.Route); b != nil && !b.take(time.Now()) {
		return g.respond(w, "THROTTLED", http.StatusTooManyRequests, "Too Many Requests", reqID)
	}

	var auth authResult
	if route.Authorizer != "" {
		a, ok := g.cfg.API.Authorizers[route.Authorizer]
		if !ok {
			return g.respond(w, "AUTHORIZER_CONFIGURATION_ERROR", http.StatusInternalServerError, "", reqID)
		}
		identity := make([]string, 0, len(a.Headers))
		for _, h := range a.Headers {
			v := r.Header.Get(h)
			if v == "" {
				log.Info("authorizer", "decision", "no identity", "header", h)
				return g.respond(w, "UNAUTHORIZED", http.StatusUnauthorized, "Unauthorized", reqID)
			}
			identity = append(identity, v)
		}
		res, fromCache, err := g.authorize(r, route, a, identity, params, reqID)
		switch {
		case err != nil:
			log.Warn("authorizer", "decision", "error", "err", err.Error())
			return g.respond(w, "AUTHORIZER_CONFIGURATION_ERROR", http.StatusInternalServerError, "", reqID)
		case res.unauthorized:
			log.Info("authorizer", "decision", "Unauthorized", "cached", fromCache)
			return g.respond(w, "UNAUTHORIZED", http.StatusUnauthorized, "Unauthorized", reqID)
		case !res.allow:
			log.Info("authorizer", "decision", "Deny", "principalId", res.principalID, "cached", fromCache)
			return g.respond(w, "ACCESS_DENIED", http.StatusForbidden, "User is not authorized to access this resource", reqID)
		}
		log.Info("authorizer", "decision", "Allow", "principalId", res.principalID, "cached", fromCache)
		auth = res
	}
	var apiKey string
	if route.APIKeyRequired {
		if g.cfg.API.APIKeySource == "AUTHORIZER" {
			apiKey = auth.usageKey
		} else {
			apiKey = r.Header.Get("X-API-Key")
		}
		errType, status := g.meter(apiKey)
		if errType != "" {
			log.Info("usage plan", "refused", errType)
			return g.respond(w, errType, status, "", reqID)
		}
	}

	event, err := g.event(r, route, resourcePath, params, body, auth, apiKey, reqID)
	if err != nil {
		return g.respond(w, "DEFAULT_5XX", http.StatusInternalServerError, "Internal server error", reqID)
	}
	if len(event) > MaxLambdaRequestBytes {
		// Lambda refuses the invocation (RequestEntityTooLargeException);
		// API Gateway answers 413.
		log.Warn("integration", "function", route.Function, "error", "event over Lambda's 6 MB", "bytes", len(event))
		return g.respond(w, "REQUEST_TOO_LARGE", http.StatusRequestEntityTooLarge, "Request Too Long", reqID)
	}
	if route.Stream {
		return g.stream(w, r, route, event, reqID, log)
	}
	ctx, cancel := context.WithTimeout(r.Context(), IntegrationTimeout)
	defer cancel()
	res, p, cold, err := route.Invoker.Invoke(ctx, reqID, event)
	pid := pidOf(p)
	if status, errType, failed := g.failed(ctx, w, route, pid, res, err, reqID, log); failed {
		return status, errType
	}
	switch {
	case len(res.Payload) > MaxLambdaResponseBytes:
		log.Warn("integration", "function", route.Function, "pid", pid, "error", "response over 6 MB")
		return g.respond(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error", reqID)
	}
	log.Info("integration", "function", route.Function, "pid", pid, "cold", cold)
	status, ok := writeProxyResponse(w, res.Payload)
	if !ok {
		log.Warn("integration", "function", route.Function, "error", "malformed Lambda proxy response")
		return g.respond(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error", reqID)
	}
	return status, ""
}

// failed answers an invocation that gave no answer to pass on, buffered
// or streamed alike: it timed out (504), could not run (502), or the
// function raised an error (502). It reports whether it answered.
func (g *Gateway) failed(ctx context.Context, w http.ResponseWriter, route *Route, pid int, res lambdaruntime.Result, err error, reqID string, log *slog.Logger) (status int, errType string, failed bool) {
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		log.Warn("integration", "function", route.Function, "pid", pid, "error", "timeout")
		status, errType = g.respond(w, "INTEGRATION_TIMEOUT", http.StatusGatewayTimeout, "Endpoint request timed out", reqID)
	case err != nil:
		log.Warn("integration", "function", route.Function, "pid", pid, "error", err.Error())
		status, errType = g.respond(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error", reqID)
	case res.IsError:
		log.Warn("integration", "function", route.Function, "pid", pid, "errorType", res.ErrorType, "errorMessage", res.ErrorMessage)
		status, errType = g.respond(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error", reqID)
	default:
		return 0, "", false
	}
	return status, errType, true
}

// pidOf is the process's pid for the log, 0 when there is none.
func pidOf(p *lambdaruntime.Process) int {
	if p == nil {
		return 0
	}
	return p.PID()
}

// stream serves a route whose integration streams the response (a Lambda
// proxy integration with responseTransferMode STREAM): the function is
// invoked as InvokeWithResponseStream does, its answer is a JSON prelude
// (statusCode, headers, multiValueHeaders, cookies), eight NUL bytes,
// then the body, which reaches the client as the function writes it,
// without the 6 MB and 29-second caps of a buffered answer but within
// the stream's 15 minutes and, between writes, its idle timeout ("Set up a
// Lambda proxy integration with payload response streaming in API
// Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html,
// read 2026-11-26). A function error before the prelude is a 502, as a
// buffered one; after it the stream just ends.
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, route *Route, event []byte, reqID string, log *slog.Logger) (int, string) {
	inv, ok := route.Invoker.(StreamInvoker)
	if !ok {
		log.Warn("integration", "function", route.Function, "error", "the function cannot be invoked with a streamed response")
		return g.respond(w, "DEFAULT_5XX", http.StatusInternalServerError, "Internal server error", reqID)
	}
	limit := MaxStreamDuration
	if route.Timeout > 0 && route.Timeout < limit {
		limit = route.Timeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	res, p, cold, err := inv.InvokeStream(ctx, reqID, event)
	pid := pidOf(p)
	if status, errType, failed := g.failed(ctx, w, route, pid, res, err, reqID, log); failed {
		return status, errType
	}
	body := res.Stream
	defer body.Close()
	// The stream's bounds: its duration (ctx) and its idle timeout; the
	// client going away ends it too. Closing body ends a blocked read.
	idle := time.AfterFunc(StreamIdleTimeout, func() { body.Close() })
	defer idle.Stop()
	stop := context.AfterFunc(ctx, func() { body.Close() })
	defer stop()

	prelude, rest, err := readPrelude(body)
	if err != nil {
		log.Warn("integration", "function", route.Function, "pid", pid, "error", "malformed streamed response: "+err.Error())
		return g.respond(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error", reqID)
	}
	h := w.Header()
	for k, vs := range prelude.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range prelude.Headers {
		if _, ok := prelude.MultiValueHeaders[k]; !ok {
			h.Set(k, v)
		}
	}
	for _, c := range prelude.Cookies {
		h.Add("Set-Cookie", c)
	}
	log.Info("integration", "function", route.Function, "pid", pid, "cold", cold, "streamed", true)
	w.WriteHeader(prelude.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	if len(rest) > 0 {
		w.Write(rest)
	}
	rc.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			idle.Reset(StreamIdleTimeout)
			if _, werr := w.Write(buf[:n]); werr != nil {
				break // the client went away
			}
			if rc.Flush() != nil {
				break
			}
		}
		if err != nil {
			if err != io.EOF {
				log.Warn("integration", "function", route.Function, "pid", pid, "streamEnded", err.Error())
			}
			break
		}
	}
	return prelude.StatusCode, ""
}

// streamPrelude is the metadata a streamed Lambda proxy answer begins with.
type streamPrelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

// readPrelude reads a streamed answer up to the eight NUL bytes that end
// its prelude, and returns the prelude and what was read after it.
func readPrelude(body io.Reader) (streamPrelude, []byte, error) {
	var p streamPrelude
	delim := make([]byte, 8)
	var got []byte
	buf := make([]byte, 4<<10)
	for {
		if i := bytes.Index(got, delim); i >= 0 {
			if err := json.Unmarshal(got[:i], &p); err != nil {
				return p, nil, fmt.Errorf("prelude: %w", err)
			}
			if p.StatusCode == 0 {
				p.StatusCode = http.StatusOK
			}
			if p.StatusCode < 100 || p.StatusCode > 599 {
				return p, nil, fmt.Errorf("prelude: status %d", p.StatusCode)
			}
			return p, got[i+len(delim):], nil
		}
		if len(got) > maxPreludeBytes {
			return p, nil, fmt.Errorf("no prelude within %d bytes", maxPreludeBytes)
		}
		n, err := body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil && n == 0 {
			return p, nil, fmt.Errorf("ended before its prelude: %w", err)
		}
	}
}

// match finds the route of method and path: an exact method before ANY,
// and literal segments before {parameters}.
func (g *Gateway) match(method, p string) (*Route, map[string]string) {
	var best *Route
	var bestParams map[string]string
	bestScore := -1
	for i := range g.cfg.Routes {
		rt := &g.cfg.Routes[i]
		if rt.Method != "ANY" && rt.Method != method {
			continue
		}
		params, literal, ok := matchPath(rt.Path, p)
		if !ok {
			continue
		}
		score := literal * 2
		if rt.Method != "ANY" {
			score++
		}
		if score > bestScore {
			best, bestParams, bestScore = rt, params, score
		}
	}
	return best, bestParams
}

func matchPath(pattern, p string) (map[string]string, int, bool) {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(p, "/"), "/")
	if len(ps) != len(xs) {
		return nil, 0, false
	}
	params := map[string]string{}
	literal := 0
	for i, seg := range ps {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if xs[i] == "" {
				return nil, 0, false
			}
			params[strings.Trim(seg, "{}")] = xs[i]
			continue
		}
		if seg != xs[i] {
			return nil, 0, false
		}
		literal++
	}
	return params, literal, true
}

// meter applies the usage plan of the API key; it returns the gateway
// response type refusing the request, or "".
func (g *Gateway) meter(value string) (string, int) {
	if value == "" || g.cfg.Keys == nil {
		return "INVALID_API_KEY", http.StatusForbidden
	}
	k, plan, ok := g.cfg.Keys.Meter(value)
	if !ok || !k.Enabled {
		return "INVALID_API_KEY", http.StatusForbidden
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if plan.Throttle != nil && plan.Throttle.RateLimit > 0 {
		b := g.buckets[k.ID]
		if b == nil || b.rate != plan.Throttle.RateLimit || b.burst != float64(plan.Throttle.BurstLimit) {
			b = newBucket(plan.Throttle.RateLimit, plan.Throttle.BurstLimit)
			g.buckets[k.ID] = b
		}
		if !b.take(now) {
			return "THROTTLED", http.StatusTooManyRequests
		}
	}
	if plan.Quota != nil && plan.Quota.Limit > 0 {
		period := quotaPeriod(plan.Quota.Period, now)
		u := g.quotas[k.ID]
		if u.period != period {
			u = quotaUse{period: period}
		}
		if u.n >= plan.Quota.Limit {
			return "QUOTA_EXCEEDED", http.StatusTooManyRequests
		}
		u.n++
		g.quotas[k.ID] = u
	}
	return "", 0
}

func quotaPeriod(period string, now time.Time) string {
	now = now.UTC()
	switch period {
	case "WEEK":
		y, w := now.ISOWeek()
		return fmt.Sprintf("%d-W%d", y, w)
	case "MONTH":
		return now.Format("2006-01")
	}
	return now.Format("2006-01-02")
}

// bucket is a token bucket: rate tokens a second, at most burst.
// methodBucket is the bucket of the stage's method throttling that
// route's method draws on, one per method for all clients together as
// API Gateway's, or nil when its method is not throttled.
func (g *Gateway) methodBucket(rt samtemplate.Route) *bucket {
	th, ok := samtemplate.Throttle{}, false
	for _, k := range []string{rt.Method + " " + rt.Path, "* " + rt.Path, rt.Method + " /*", "* /*"} {
		if th, ok = g.cfg.API.MethodThrottles[k]; ok {
			break
		}
	}
	if !ok || th.RateLimit <= 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key := "method " + rt.Method + " " + rt.Path
	b := g.buckets[key]
	if b == nil {
		b = newBucket(th.RateLimit, th.BurstLimit)
		g.buckets[key] = b
	}
	return b
}

type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int) *bucket {
	if burst < 1 {
		burst = 1
	}
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

func (b *bucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// authResult is an authorizer's decision.
type authResult struct {
	allow, unauthorized bool
	principalID         string
	usageKey            string
	context             map[string]any
}

// authorize runs the authorizer, or answers its cached decision.
func (g *Gateway) authorize(r *http.Request, route *Route, a samtemplate.Authorizer, identity []string, params map[string]string, reqID string) (authResult, bool, error) {
	key := route.Authorizer + "\x00" + strings.Join(identity, "\x00")
	now := time.Now()
	if a.TTLSeconds > 0 {
		g.mu.Lock()
		c, ok := g.cache[key]
		g.mu.Unlock()
		if ok && now.Before(c.expires) {
			return c.res, true, nil
		}
	}
	inv := g.cfg.Authorizers[route.Authorizer]
	if inv == nil {
		return authResult{}, false, fmt.Errorf("authorizer %s has no function", route.Authorizer)
	}
	methodArn := fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s%s", g.cfg.Region, g.cfg.Account, g.cfg.APIID,
		g.cfg.API.StageName, r.Method, strings.TrimPrefix(r.URL.Path, "/"+g.cfg.API.StageName))
	var event any
	if a.PayloadType == "TOKEN" {
		event = map[string]any{"type": "TOKEN", "authorizationToken": identity[0], "methodArn": methodArn}
	} else {
		event = map[string]any{
			"type": "REQUEST", "methodArn": methodArn, "resource": route.Path,
			"path": r.URL.Path, "httpMethod": r.Method,
			"headers": singleHeaders(r.Header), "multiValueHeaders": r.Header,
			"queryStringParameters": singleQuery(r), "multiValueQueryStringParameters": nilIfEmpty(r.URL.Query()),
			"pathParameters": nilIfEmptyMap(params), "stageVariables": nil,
			"requestContext": g.requestContext(r, route, reqID, authResult{}, ""),
		}
	}
	payload, _ := json.Marshal(event)
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	res, _, _, err := inv.Invoke(ctx, reqID+"-auth", payload)
	if err != nil {
		return authResult{}, false, err
	}
	if res.IsError {
		if res.ErrorMessage == "Unauthorized" {
			return authResult{unauthorized: true}, false, nil
		}
		return authResult{}, false, fmt.Errorf("%s: %s", res.ErrorType, res.ErrorMessage)
	}
	var out struct {
		PrincipalID    string `json:"principalId"`
		PolicyDocument struct {
			Statement []struct {
				Effect   string `json:"Effect"`
				Action   any    `json:"Action"`
				Resource any    `json:"Resource"`
			} `json:"Statement"`
		} `json:"policyDocument"`
		Context            map[string]any `json:"context"`
		UsageIdentifierKey string         `json:"usageIdentifierKey"`
	}
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		return authResult{}, false, fmt.Errorf("authorizer answer: %w", err)
	}
	ar := authResult{principalID: out.PrincipalID, usageKey: out.UsageIdentifierKey, context: out.Context}
	for _, s := range out.PolicyDocument.Statement {
		if strings.EqualFold(s.Effect, "Allow") {
			ar.allow = true
		}
		if strings.EqualFold(s.Effect, "Deny") {
			ar.allow = false
			break
		}
	}
	if a.TTLSeconds > 0 {
		g.mu.Lock()
		g.cache[key] = cached{res: ar, expires: now.Add(time.Duration(a.TTLSeconds) * time.Second)}
		g.mu.Unlock()
	}
	return ar, false, nil
}

func (g *Gateway) requestContext(r *http.Request, route *Route, reqID string, auth authResult, apiKey string) map[string]any {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	rc := map[string]any{
		"accountId": g.cfg.Account, "apiId": g.cfg.APIID, "stage": g.cfg.API.StageName,
		"requestId": reqID, "extendedRequestId": reqID,
		"resourcePath": route.Path, "httpMethod": r.Method, "path": r.URL.Path,
		"protocol": r.Proto, "requestTimeEpoch": time.Now().UnixMilli(),
		"identity": map[string]any{"sourceIp": host, "userAgent": r.UserAgent(), "apiKey": nilIfEmptyString(apiKey)},
	}
	if auth.principalID != "" || auth.context != nil {
		ac := map[string]any{"principalId": auth.principalID}
		for k, v := range auth.context {
			ac[k] = v
		}
		rc["authorizer"] = ac
	}
	return rc
}

// event is the REST API (v1) proxy integration's event.
func (g *Gateway) event(r *http.Request, route *Route, resourcePath string, params map[string]string, body []byte, auth authResult, apiKey, reqID string) ([]byte, error) {
	ev := map[string]any{
		"resource": route.Path, "path": resourcePath, "httpMethod": r.Method,
		"headers": singleHeaders(r.Header), "multiValueHeaders": nilIfEmptyHeader(r.Header),
		"queryStringParameters": singleQuery(r), "multiValueQueryStringParameters": nilIfEmpty(r.URL.Query()),
		"pathParameters": nilIfEmptyMap(params), "stageVariables": nil,
		"requestContext":  g.requestContext(r, route, reqID, auth, apiKey),
		"isBase64Encoded": false, "body": nil,
	}
	if len(body) > 0 {
		if g.binary(r.Header.Get("Content-Type")) {
			ev["body"] = base64.StdEncoding.EncodeToString(body)
			ev["isBase64Encoded"] = true
		} else {
			ev["body"] = string(body)
		}
	}
	return json.Marshal(ev)
}

func (g *Gateway) binary(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.TrimSpace(strings.Split(contentType, ";")[0])
	}
	for _, b := range g.cfg.API.BinaryMediaTypes {
		if b == "*/*" || strings.EqualFold(b, mt) {
			return true
		}
		if strings.HasSuffix(b, "/*") && strings.HasPrefix(strings.ToLower(mt), strings.ToLower(strings.TrimSuffix(b, "*"))) {
			return true
		}
	}
	return false
}

// writeProxyResponse writes a Lambda proxy integration's answer.
func writeProxyResponse(w http.ResponseWriter, payload []byte) (int, bool) {
	var out struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(payload, &out); err != nil || out.StatusCode < 100 || out.StatusCode > 599 {
		return 0, false
	}
	body := []byte(out.Body)
	if out.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(out.Body)
		if err != nil {
			return 0, false
		}
		body = b
	}
	h := w.Header()
	for k, vs := range out.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range out.Headers {
		if _, ok := out.MultiValueHeaders[k]; !ok {
			h.Set(k, v)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(out.StatusCode)
	w.Write(body)
	return out.StatusCode, true
}

// respond writes the gateway response of type typ: the template's if it
// defines one (or its DEFAULT_4XX / DEFAULT_5XX), API Gateway's own
// {"message": ...} otherwise.
func (g *Gateway) respond(w http.ResponseWriter, typ string, status int, message, reqID string) (int, string) {
	gr, ok := g.cfg.API.GatewayResponses[typ]
	if !ok {
		if status >= 500 {
			gr, ok = g.cfg.API.GatewayResponses["DEFAULT_5XX"]
		} else {
			gr, ok = g.cfg.API.GatewayResponses["DEFAULT_4XX"]
		}
	}
	if gr.StatusCode != 0 && g.cfg.API.GatewayResponses[typ].StatusCode != 0 {
		status = gr.StatusCode
	}
	body := fmt.Sprintf(`{"message":%q}`, message)
	if tpl, has := gr.Templates["application/json"]; ok && has {
		msg, _ := json.Marshal(message)
		body = strings.NewReplacer("$context.error.messageString", string(msg),
			"$context.error.message", message, "$context.requestId", reqID,
			"$context.error.responseType", typ).Replace(tpl)
	}
	for k, v := range gr.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	io.WriteString(w, body)
	return status, typ
}

func singleHeaders(h http.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = v[len(v)-1]
	}
	return out
}

func singleQuery(r *http.Request) map[string]string {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	out := make(map[string]string, len(q))
	for k, v := range q {
		out[k] = v[len(v)-1]
	}
	return out
}

func nilIfEmpty(v map[string][]string) map[string][]string {
	if len(v) == 0 {
		return nil
	}
	return v
}

func nilIfEmptyHeader(h http.Header) map[string][]string { return nilIfEmpty(h) }

func nilIfEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func nilIfEmptyString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func newUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
