// Package sfnstarttest runs a fake of the Step Functions JSON API on
// loopback for tests: StartExecution, DescribeExecution and StopExecution of standard
// executions, with the service's naming rules (a name is taken for good;
// starting it again with the same input while it runs returns it, anything
// else is ExecutionAlreadyExists). Executions run nothing: a test finishes
// them with Finish.
package sfnstarttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// Region and StateMachineARN are what the fake answers for.
const (
	Region          = "us-east-1"
	StateMachineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:gen-generation"
)

// Execution is one execution the fake holds.
type Execution struct {
	Name   string
	Input  string
	Status string // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
}

// Server is the fake.
type Server struct {
	// URL is the endpoint, http://127.0.0.1:<port>.
	URL string

	mu      sync.Mutex
	execs   map[string]*Execution
	order   []string
	failErr string // answer every StartExecution with this error code
	calls   []string
}

// NewServer starts the fake; it stops when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{execs: map[string]*Execution{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Client returns a client of the fake, with dummy credentials and without
// retries.
func (s *Server) Client() *sfn.Client {
	return sfn.New(sfn.Options{
		Region:           Region,
		BaseEndpoint:     aws.String(s.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

// Executions returns the executions in the order they were started.
func (s *Server) Executions() []Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Execution, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, *s.execs[n])
	}
	return out
}

// Calls lists the operations called, as "StartExecution <name>".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Finish ends a running execution with status (SUCCEEDED, FAILED, ...).
func (s *Server) Finish(t testing.TB, name, status string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.execs[name]
	if !ok {
		t.Fatalf("fake Step Functions: no execution %s to finish", name)
	}
	e.Status = status
}

// FailStarts makes every later StartExecution fail with the error code
// (e.g. "StateMachineDoesNotExist"); "" makes them succeed again.
func (s *Server) FailStarts(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failErr = code
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	op, _ := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-1.0") {
		writeErr(w, http.StatusBadRequest, "UnknownOperationException", "want a POST of application/x-amz-json-1.0")
		return
	}
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		Name            string `json:"name"`
		Input           string `json:"input"`
		ExecutionArn    string `json:"executionArn"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case "StartExecution":
		s.calls = append(s.calls, op+" "+in.Name)
		s.start(w, in.StateMachineArn, in.Name, in.Input)
	case "DescribeExecution":
		name := strings.TrimPrefix(in.ExecutionArn, executionPrefix())
		s.calls = append(s.calls, op+" "+name)
		e, ok := s.execs[name]
		if !ok || name == in.ExecutionArn {
			writeErr(w, http.StatusBadRequest, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+in.ExecutionArn+"'")
			return
		}
		writeJSON(w, map[string]any{
			"executionArn": in.ExecutionArn, "stateMachineArn": StateMachineARN, "name": e.Name,
			"status": e.Status, "input": e.Input, "startDate": float64(time.Now().Unix()),
		})
	case "StopExecution":
		// A running execution is aborted; one that has ended stays as
		// it is.
		name := strings.TrimPrefix(in.ExecutionArn, executionPrefix())
		s.calls = append(s.calls, op+" "+name)
		e, ok := s.execs[name]
		if !ok || name == in.ExecutionArn {
			writeErr(w, http.StatusBadRequest, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+in.ExecutionArn+"'")
			return
		}
		if e.Status == "RUNNING" {
			e.Status = "ABORTED"
		}
		writeJSON(w, map[string]any{"stopDate": float64(time.Now().Unix())})
	default:
		writeErr(w, http.StatusBadRequest, "UnknownOperationException", "the fake does not serve "+op)
	}
}

func (s *Server) start(w http.ResponseWriter, machine, name, input string) {
	if s.failErr != "" {
		writeErr(w, http.StatusBadRequest, s.failErr, "injected failure")
		return
	}
	if machine != StateMachineARN {
		writeErr(w, http.StatusBadRequest, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+machine+"'")
		return
	}
	if name == "" || len(name) > 80 || strings.ContainsAny(name, " <>{}[]?*\"#%\\^|~`$&,;:/") {
		writeErr(w, http.StatusBadRequest, "InvalidName", fmt.Sprintf("invalid execution name %q", name))
		return
	}
	if !json.Valid([]byte(input)) {
		writeErr(w, http.StatusBadRequest, "InvalidExecutionInput", "input is not JSON")
		return
	}
	if e, ok := s.execs[name]; ok {
		if e.Status == "RUNNING" && e.Input == input {
			writeJSON(w, map[string]any{"executionArn": executionPrefix() + name, "startDate": float64(time.Now().Unix())})
			return
		}
		writeErr(w, http.StatusBadRequest, "ExecutionAlreadyExists", "Execution Already Exists: '"+executionPrefix()+name+"'")
		return
	}
	s.execs[name] = &Execution{Name: name, Input: input, Status: "RUNNING"}
	s.order = append(s.order, name)
	writeJSON(w, map[string]any{"executionArn": executionPrefix() + name, "startDate": float64(time.Now().Unix())})
}

func executionPrefix() string {
	return strings.Replace(StateMachineARN, ":stateMachine:", ":execution:", 1) + ":"
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.swf.service.v2.model#" + code, "message": msg})
}
