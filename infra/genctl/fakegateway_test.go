package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
)

// fakeGateway is the part of the API Gateway REST API (the control plane
// the SDK calls) that genctl uses, in memory, answering as the service
// does: JSON with the SDK's field names, list results under "item",
// errors as X-Amzn-ErrorType plus {"message"}.
type fakeGateway struct {
	mu       sync.Mutex
	keys     map[string]*fakeKey  // by id
	plans    map[string]*fakePlan // by id
	next     int
	failures map[string]int // operation -> calls left that fail
}

type fakeKey struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Value       string `json:"value,omitempty"`
	Enabled     bool   `json:"enabled"`
	CustomerID  string `json:"customerId,omitempty"`
	Description string `json:"description,omitempty"`
}

type fakeStage struct {
	APIID string `json:"apiId"`
	Stage string `json:"stage"`
}

type fakePlan struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	APIStages []fakeStage `json:"apiStages"`
	Throttle  *struct {
		BurstLimit int     `json:"burstLimit"`
		RateLimit  float64 `json:"rateLimit"`
	} `json:"throttle,omitempty"`
	Quota *struct {
		Limit  int    `json:"limit"`
		Period string `json:"period"`
	} `json:"quota,omitempty"`
	keys map[string]bool // gateway key ids
}

func newFakeGateway() *fakeGateway {
	return &fakeGateway{keys: map[string]*fakeKey{}, plans: map[string]*fakePlan{}, failures: map[string]int{}}
}

// addPlan adds a usage plan, as the stack creates one.
func (g *fakeGateway) addPlan(id, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.plans[id] = &fakePlan{ID: id, Name: name, APIStages: []fakeStage{{APIID: "api123", Stage: "v1"}}, keys: map[string]bool{}}
}

// failNext makes the next n calls of an operation fail.
func (g *fakeGateway) failNext(op string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures[op] = n
}

// keyByValue returns a copy of the key with that value.
func (g *fakeGateway) keyByValue(value string) (fakeKey, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		if k.Value == value {
			return *k, true
		}
	}
	return fakeKey{}, false
}

// countKeys counts the keys with that value.
func (g *fakeGateway) countKeys(value string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, k := range g.keys {
		if k.Value == value {
			n++
		}
	}
	return n
}

// plansOf lists the ids of the plans a key is in, sorted.
func (g *fakeGateway) plansOf(keyID string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for id, p := range g.plans {
		if p.keys[keyID] {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func (g *fakeGateway) plan(id string) (fakePlan, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.plans[id]
	if !ok {
		return fakePlan{}, false
	}
	return *p, true
}

func (g *fakeGateway) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apikeys", g.op("GetApiKeys", g.getAPIKeys))
	mux.HandleFunc("POST /apikeys", g.op("CreateApiKey", g.createAPIKey))
	mux.HandleFunc("PATCH /apikeys/{id}", g.op("UpdateApiKey", g.updateAPIKey))
	mux.HandleFunc("GET /usageplans", g.op("GetUsagePlans", g.getUsagePlans))
	mux.HandleFunc("POST /usageplans", g.op("CreateUsagePlan", g.createUsagePlan))
	mux.HandleFunc("GET /usageplans/{id}", g.op("GetUsagePlan", g.getUsagePlan))
	mux.HandleFunc("POST /usageplans/{id}/keys", g.op("CreateUsagePlanKey", g.createUsagePlanKey))
	mux.HandleFunc("GET /usageplans/{id}/keys/{keyId}", g.op("GetUsagePlanKey", g.getUsagePlanKey))
	mux.HandleFunc("DELETE /apikeys/{id}", g.op("DeleteApiKey", g.deleteAPIKey))
	mux.HandleFunc("PATCH /usageplans/{id}", g.op("UpdateUsagePlan", g.updateUsagePlan))
	mux.HandleFunc("DELETE /usageplans/{id}", g.op("DeleteUsagePlan", g.deleteUsagePlan))
	return mux
}

type apiError struct {
	status int
	typ    string
	msg    string
}

// op serves one operation under the lock, injecting the failures asked
// for, and renders its result or error as the service does.
func (g *fakeGateway) op(name string, fn func(r *http.Request) (int, any, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		var status int
		var body any
		var err *apiError
		if g.failures[name] > 0 {
			g.failures[name]--
			// Not retried by the SDK: a missing permission, say.
			err = &apiError{http.StatusForbidden, "AccessDeniedException", "not authorized to perform apigateway:POST (injected)"}
		} else {
			status, body, err = fn(r)
		}
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.Header().Set("X-Amzn-ErrorType", err.typ)
			w.WriteHeader(err.status)
			json.NewEncoder(w).Encode(map[string]string{"message": err.msg})
			return
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}
}

func (g *fakeGateway) id(prefix string) string {
	g.next++
	return fmt.Sprintf("%s%04d", prefix, g.next)
}

func decode(r *http.Request, v any) *apiError {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return &apiError{http.StatusBadRequest, "BadRequestException", err.Error()}
	}
	return nil
}

func (g *fakeGateway) getAPIKeys(r *http.Request) (int, any, *apiError) {
	name := r.URL.Query().Get("name")
	values := r.URL.Query().Get("includeValues") == "true"
	items := []fakeKey{}
	for _, k := range g.keys {
		if strings.HasPrefix(k.Name, name) { // the name query matches prefixes
			c := *k
			if !values {
				c.Value = ""
			}
			items = append(items, c)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return http.StatusOK, map[string]any{"item": items}, nil
}

func (g *fakeGateway) createAPIKey(r *http.Request) (int, any, *apiError) {
	var in fakeKey
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	for _, k := range g.keys {
		if k.Value == in.Value {
			return 0, nil, &apiError{http.StatusConflict, "ConflictException", "API Key already exists"}
		}
	}
	in.ID = g.id("key")
	g.keys[in.ID] = &in
	return http.StatusCreated, in, nil
}

func (g *fakeGateway) updateAPIKey(r *http.Request) (int, any, *apiError) {
	k, ok := g.keys[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid API Key identifier specified"}
	}
	var in struct {
		PatchOperations []struct{ Op, Path, Value string } `json:"patchOperations"`
	}
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	for _, p := range in.PatchOperations {
		if p.Op != "replace" || p.Path != "/enabled" {
			return 0, nil, &apiError{http.StatusBadRequest, "BadRequestException", "unsupported patch " + p.Op + " " + p.Path}
		}
		k.Enabled = p.Value == "true"
	}
	return http.StatusOK, *k, nil
}

func (g *fakeGateway) getUsagePlans(r *http.Request) (int, any, *apiError) {
	items := []fakePlan{}
	for _, p := range g.plans {
		items = append(items, *p)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return http.StatusOK, map[string]any{"item": items}, nil
}

func (g *fakeGateway) getUsagePlan(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	return http.StatusOK, *p, nil
}

func (g *fakeGateway) createUsagePlan(r *http.Request) (int, any, *apiError) {
	var in fakePlan
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	in.ID = g.id("plan")
	in.keys = map[string]bool{}
	g.plans[in.ID] = &in
	return http.StatusCreated, in, nil
}

func (g *fakeGateway) createUsagePlanKey(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	var in struct {
		KeyID   string `json:"keyId"`
		KeyType string `json:"keyType"`
	}
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	k, ok := g.keys[in.KeyID]
	if !ok || in.KeyType != "API_KEY" {
		return 0, nil, &apiError{http.StatusBadRequest, "BadRequestException", "Invalid API Key identifier specified"}
	}
	if p.keys[in.KeyID] {
		return 0, nil, &apiError{http.StatusConflict, "ConflictException", "Usage Plan " + p.ID + " cannot be added because API Key " + in.KeyID + " already exists"}
	}
	// A key may be in one plan per API stage.
	for _, other := range g.plans {
		if other.keys[in.KeyID] {
			return 0, nil, &apiError{http.StatusConflict, "ConflictException", "API Key " + in.KeyID + " is already in usage plan " + other.ID + " on the same stage"}
		}
	}
	p.keys[in.KeyID] = true
	return http.StatusCreated, map[string]string{"id": k.ID, "type": "API_KEY", "name": k.Name}, nil
}

func (g *fakeGateway) getUsagePlanKey(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok || !p.keys[r.PathValue("keyId")] {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan Key identifier specified"}
	}
	k := g.keys[r.PathValue("keyId")]
	return http.StatusOK, map[string]string{"id": k.ID, "type": "API_KEY", "name": k.Name}, nil
}

// deleteAPIKey deletes a key and its usage-plan keys, as API Gateway does.
func (g *fakeGateway) deleteAPIKey(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if _, ok := g.keys[id]; !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid API Key identifier specified"}
	}
	delete(g.keys, id)
	for _, p := range g.plans {
		delete(p.keys, id)
	}
	return http.StatusAccepted, nil, nil
}

// updateUsagePlan supports what genctl patches: removing API stages.
func (g *fakeGateway) updateUsagePlan(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	var in struct {
		PatchOperations []struct{ Op, Path, Value string } `json:"patchOperations"`
	}
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	for _, op := range in.PatchOperations {
		if op.Op != "remove" || op.Path != "/apiStages" {
			return 0, nil, &apiError{http.StatusBadRequest, "BadRequestException", "unsupported patch " + op.Op + " " + op.Path}
		}
		p.APIStages = slices.DeleteFunc(p.APIStages, func(s fakeStage) bool { return s.APIID+":"+s.Stage == op.Value })
	}
	return http.StatusOK, *p, nil
}

// deleteUsagePlan refuses a plan still on a stage, as API Gateway does.
func (g *fakeGateway) deleteUsagePlan(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	if len(p.APIStages) > 0 {
		return 0, nil, &apiError{http.StatusBadRequest, "BadRequestException", "Cannot delete Usage Plan " + p.ID + " because there are API Stages associated with it"}
	}
	delete(g.plans, p.ID)
	return http.StatusAccepted, nil, nil
}
