// Package apikeys is API Gateway's API keys and usage plans on one
// machine: the control-plane API that genctl --aws calls (GetApiKeys,
// CreateApiKey, CreateUsagePlanKey, ...), answering as the service does
// (JSON with the SDK's field names, list results under "item", errors as
// X-Amzn-ErrorType plus {"message"}), and the lookup by key value that
// the gateway emulator (infra/awslocal/gateway) meters requests by. The
// genctl tests run it in memory; infra/aws-local keeps it in a file.
package apikeys

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Gateway is the part of the API Gateway REST API (the control plane
// the SDK calls) that genctl uses, in memory, answering as the service
// does: JSON with the SDK's field names, list results under "item",
// errors as X-Amzn-ErrorType plus {"message"}.
type Gateway struct {
	mu       sync.Mutex
	keys     map[string]*Key  // by id
	plans    map[string]*Plan // by id
	next     int
	failures map[string]int // operation -> calls left that fail
	path     string         // the file it is kept in, "" for memory only
}

type Key struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Value       string `json:"value,omitempty"`
	Enabled     bool   `json:"enabled"`
	CustomerID  string `json:"customerId,omitempty"`
	Description string `json:"description,omitempty"`
}

type Stage struct {
	APIID string `json:"apiId"`
	Stage string `json:"stage"`
}

type Plan struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	APIStages []Stage         `json:"apiStages"`
	Throttle  *Throttle       `json:"throttle,omitempty"`
	Quota     *Quota          `json:"quota,omitempty"`
	keys      map[string]bool // gateway key ids
}

// Throttle and Quota are a plan's limits, as API Gateway names them.
type Throttle struct {
	BurstLimit int     `json:"burstLimit"`
	RateLimit  float64 `json:"rateLimit"`
}

// Quota is a plan's request quota per period (DAY, WEEK, MONTH).
type Quota struct {
	Limit  int    `json:"limit"`
	Period string `json:"period"`
}

func New() *Gateway {
	return &Gateway{keys: map[string]*Key{}, plans: map[string]*Plan{}, failures: map[string]int{}}
}

// AddPlan adds a usage plan, as the stack creates one, on the stage v1
// of the API api123, without limits.
func (g *Gateway) AddPlan(id, name string) {
	g.PutPlan(Plan{ID: id, Name: name, APIStages: []Stage{{APIID: "api123", Stage: "v1"}}})
}

// PutPlan adds or updates a usage plan (its keys are kept), as a stack
// deployment does.
func (g *Gateway) PutPlan(p Plan) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.plans[p.ID]; ok {
		p.keys = old.keys
	} else {
		p.keys = map[string]bool{}
	}
	g.plans[p.ID] = &p
	g.saveLocked()
}

// Meter returns what API Gateway meters a request by when the authorizer
// names the API key value: the key and its usage plan. ok is false when
// no key has that value or it is in no plan.
func (g *Gateway) Meter(value string) (k Key, p Plan, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, key := range g.keys {
		if key.Value != value {
			continue
		}
		for _, plan := range g.plans {
			if plan.keys[key.ID] {
				return *key, *plan, true
			}
		}
		return *key, Plan{}, false
	}
	return Key{}, Plan{}, false
}

// snapshot is the file Open reads and every change writes.
type snapshot struct {
	Keys     []*Key              `json:"keys"`
	Plans    []*Plan             `json:"plans"`
	PlanKeys map[string][]string `json:"planKeys"`
	Next     int                 `json:"next"`
}

// Open returns a gateway kept in the JSON file path: read now if it
// exists, written after every change.
func Open(path string) (*Gateway, error) {
	g := New()
	g.path = path
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return g, nil
	}
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	var snap snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, fmt.Errorf("api keys: %s: %w", path, err)
	}
	for _, k := range snap.Keys {
		g.keys[k.ID] = k
	}
	for _, p := range snap.Plans {
		p.keys = map[string]bool{}
		for _, id := range snap.PlanKeys[p.ID] {
			p.keys[id] = true
		}
		g.plans[p.ID] = p
	}
	g.next = snap.Next
	return g, nil
}

// saveLocked writes the file, if there is one; g.mu is held.
func (g *Gateway) saveLocked() {
	if g.path == "" {
		return
	}
	snap := snapshot{PlanKeys: map[string][]string{}, Next: g.next}
	for _, k := range g.keys {
		snap.Keys = append(snap.Keys, k)
	}
	for _, p := range g.plans {
		snap.Plans = append(snap.Plans, p)
		for id := range p.keys {
			snap.PlanKeys[p.ID] = append(snap.PlanKeys[p.ID], id)
		}
	}
	b, _ := json.MarshalIndent(snap, "", "  ")
	tmp := g.path + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, g.path)
	}
}

// FailNext makes the next n calls of an operation fail.
func (g *Gateway) FailNext(op string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures[op] = n
}

// KeyByValue returns a copy of the key with that value.
func (g *Gateway) KeyByValue(value string) (Key, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		if k.Value == value {
			return *k, true
		}
	}
	return Key{}, false
}

// CountKeys counts the keys with that value.
func (g *Gateway) CountKeys(value string) int {
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

// PlansOf lists the ids of the plans a key is in, sorted.
func (g *Gateway) PlansOf(keyID string) []string {
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

// UsagePlan returns a copy of the plan.
func (g *Gateway) UsagePlan(id string) (Plan, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.plans[id]
	if !ok {
		return Plan{}, false
	}
	return *p, true
}

// Handler serves the control-plane API.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apikeys", g.op("GetApiKeys", g.getAPIKeys))
	mux.HandleFunc("POST /apikeys", g.op("CreateApiKey", g.createAPIKey))
	mux.HandleFunc("PATCH /apikeys/{id}", g.op("UpdateApiKey", g.updateAPIKey))
	mux.HandleFunc("GET /usageplans", g.op("GetUsagePlans", g.getUsagePlans))
	mux.HandleFunc("POST /usageplans", g.op("CreateUsagePlan", g.createUsagePlan))
	mux.HandleFunc("GET /usageplans/{id}", g.op("GetUsagePlan", g.getUsagePlan))
	mux.HandleFunc("POST /usageplans/{id}/keys", g.op("CreateUsagePlanKey", g.createUsagePlanKey))
	mux.HandleFunc("GET /usageplans/{id}/keys/{keyId}", g.op("GetUsagePlanKey", g.getUsagePlanKey))
	mux.HandleFunc("GET /usageplans/{id}/keys", g.op("GetUsagePlanKeys", g.getUsagePlanKeys))
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
func (g *Gateway) op(name string, fn func(r *http.Request) (int, any, *apiError)) http.HandlerFunc {
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
			if err == nil && r.Method != http.MethodGet {
				g.saveLocked()
			}
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

func (g *Gateway) id(prefix string) string {
	g.next++
	return fmt.Sprintf("%s%04d", prefix, g.next)
}

func decode(r *http.Request, v any) *apiError {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return &apiError{http.StatusBadRequest, "BadRequestException", err.Error()}
	}
	return nil
}

func (g *Gateway) getAPIKeys(r *http.Request) (int, any, *apiError) {
	name := r.URL.Query().Get("name")
	values := r.URL.Query().Get("includeValues") == "true"
	items := []Key{}
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

func (g *Gateway) createAPIKey(r *http.Request) (int, any, *apiError) {
	var in Key
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

func (g *Gateway) updateAPIKey(r *http.Request) (int, any, *apiError) {
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

func (g *Gateway) getUsagePlans(r *http.Request) (int, any, *apiError) {
	items := []Plan{}
	keyID := r.URL.Query().Get("keyId") // only the plans holding that key
	for _, p := range g.plans {
		if keyID == "" || p.keys[keyID] {
			items = append(items, *p)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return http.StatusOK, map[string]any{"item": items}, nil
}

func (g *Gateway) getUsagePlan(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	return http.StatusOK, *p, nil
}

func (g *Gateway) createUsagePlan(r *http.Request) (int, any, *apiError) {
	var in Plan
	if err := decode(r, &in); err != nil {
		return 0, nil, err
	}
	in.ID = g.id("plan")
	in.keys = map[string]bool{}
	g.plans[in.ID] = &in
	return http.StatusCreated, in, nil
}

func (g *Gateway) createUsagePlanKey(r *http.Request) (int, any, *apiError) {
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

func (g *Gateway) getUsagePlanKeys(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan ID specified"}
	}
	items := []map[string]string{}
	for id := range p.keys {
		items = append(items, map[string]string{"id": id, "type": "API_KEY", "name": g.keys[id].Name})
	}
	sort.Slice(items, func(i, j int) bool { return items[i]["id"] < items[j]["id"] })
	return http.StatusOK, map[string]any{"item": items}, nil
}

func (g *Gateway) getUsagePlanKey(r *http.Request) (int, any, *apiError) {
	p, ok := g.plans[r.PathValue("id")]
	if !ok || !p.keys[r.PathValue("keyId")] {
		return 0, nil, &apiError{http.StatusNotFound, "NotFoundException", "Invalid Usage Plan Key identifier specified"}
	}
	k := g.keys[r.PathValue("keyId")]
	return http.StatusOK, map[string]string{"id": k.ID, "type": "API_KEY", "name": k.Name}, nil
}

// deleteAPIKey deletes a key and its usage-plan keys, as API Gateway does.
func (g *Gateway) deleteAPIKey(r *http.Request) (int, any, *apiError) {
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
func (g *Gateway) updateUsagePlan(r *http.Request) (int, any, *apiError) {
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
		p.APIStages = slices.DeleteFunc(p.APIStages, func(s Stage) bool { return s.APIID+":"+s.Stage == op.Value })
	}
	return http.StatusOK, *p, nil
}

// deleteUsagePlan refuses a plan still on a stage, as API Gateway does.
func (g *Gateway) deleteUsagePlan(r *http.Request) (int, any, *apiError) {
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

// EnsureKey makes sure an enabled key with this value (and name) is in
// the plan planID, as `genctl keys create --aws` leaves a key: the AWS
// assembly on one machine wires its dev key so.
func (g *Gateway) EnsureKey(value, customerID, planID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.plans[planID]
	if !ok {
		return fmt.Errorf("api keys: no usage plan %s", planID)
	}
	var k *Key
	for _, key := range g.keys {
		if key.Value == value {
			k = key
		}
	}
	if k == nil {
		k = &Key{ID: g.id("key"), Name: value, Value: value, CustomerID: customerID}
		g.keys[k.ID] = k
	}
	k.Enabled = true
	for _, other := range g.plans {
		delete(other.keys, k.ID)
	}
	p.keys[k.ID] = true
	g.saveLocked()
	return nil
}
