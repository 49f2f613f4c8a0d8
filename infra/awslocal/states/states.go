// Package states is Step Functions on one machine for infra/aws-local:
// the JSON API the functions call (StartExecution, DescribeExecution,
// StopExecution), with each execution run by the project's ASL
// interpreter (shared/asl) over the same definition that is deployed,
// and each Task state invoking its Lambda's real binary through the
// Runtime API pool. Errors come back by the name the Runtime API reported
// (asl.NamedError), so Retry and Catch match as on AWS; a process that
// dies mid-invocation is reported as Lambda reports it, Runtime.ExitError.
package states

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
)

// Invoker runs a function.
type Invoker interface {
	Invoke(ctx context.Context, requestID string, event []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error)
}

// Service runs executions of one state machine.
type Service struct {
	arn    string
	exec   *asl.Executor
	log    *slog.Logger
	base   context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	execs map[string]*execution
	wg    sync.WaitGroup
}

type execution struct {
	name, input string
	status      string
	start, stop time.Time
	cancel      context.CancelFunc
	errName     string
	cause       string
}

// New parses definition with its substitutions; tasks maps each Task
// resource (a function ARN) to its function, named for the logs.
func New(arn string, definition []byte, subs map[string]string, tasks map[string]Invoker, names map[string]string, log *slog.Logger) (*Service, error) {
	sm, err := asl.Parse(definition, subs)
	if err != nil {
		return nil, fmt.Errorf("state machine: %w", err)
	}
	funcs := map[string]asl.TaskFunc{}
	for _, res := range sm.Resources() {
		inv, ok := tasks[res]
		if !ok {
			return nil, fmt.Errorf("state machine: no function for the resource %s", res)
		}
		name := names[res]
		funcs[res] = func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
			// The workflow's inputs name their task: the logs follow it.
			var in struct {
				TaskID string `json:"taskId"`
			}
			json.Unmarshal(input, &in)
			log := log.With("taskId", in.TaskID)
			res, p, cold, err := inv.Invoke(ctx, "", input)
			pid := 0
			if p != nil {
				pid = p.PID()
			}
			switch {
			case errors.Is(err, lambdaruntime.ErrExited):
				log.Warn("task", "function", name, "pid", pid, "error", "Runtime.ExitError")
				return nil, &asl.NamedError{Name: "Runtime.ExitError", Cause: err.Error()}
			case err != nil:
				return nil, err
			case res.IsError:
				log.Info("task", "function", name, "pid", pid, "cold", cold, "errorType", res.ErrorType)
				return nil, &asl.NamedError{Name: res.ErrorType, Cause: res.ErrorMessage}
			}
			log.Info("task", "function", name, "pid", pid, "cold", cold)
			return res.Payload, nil
		}
	}
	ex, err := asl.NewExecutor(sm, funcs, asl.WithLogger(log))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{arn: arn, exec: ex, log: log, base: ctx, cancel: cancel, execs: map[string]*execution{}}, nil
}

// Close aborts the running executions.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
	s.exec.Close()
}

func (s *Service) executionARN(name string) string {
	return strings.Replace(s.arn, ":stateMachine:", ":execution:", 1) + ":" + name
}

// ServeHTTP serves the Step Functions JSON 1.0 API.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndex(target, ".")+1:]
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		Name            string `json:"name"`
		Input           string `json:"input"`
		ExecutionArn    string `json:"executionArn"`
		Error           string `json:"error"`
		Cause           string `json:"cause"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, "SerializationException", err.Error())
		return
	}
	switch op {
	case "StartExecution":
		s.start(w, in.StateMachineArn, in.Name, in.Input)
	case "DescribeExecution":
		s.describe(w, in.ExecutionArn)
	case "StopExecution":
		s.stopExec(w, in.ExecutionArn)
	default:
		writeErr(w, "UnknownOperationException", "not served on one machine: "+op)
	}
}

func (s *Service) start(w http.ResponseWriter, smArn, name, input string) {
	if smArn != s.arn {
		writeErr(w, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+smArn+"'")
		return
	}
	var doc any
	if input == "" {
		input = "{}"
	}
	if err := json.Unmarshal([]byte(input), &doc); err != nil {
		writeErr(w, "InvalidExecutionInput", err.Error())
		return
	}
	s.mu.Lock()
	if e, ok := s.execs[name]; ok {
		running := e.status == "RUNNING"
		same := e.input == input
		start := e.start
		s.mu.Unlock()
		if running && same {
			writeJSON(w, map[string]any{"executionArn": s.executionARN(name), "startDate": float64(start.UnixMilli()) / 1000})
			return
		}
		writeErr(w, "ExecutionAlreadyExists", "Execution Already Exists: '"+s.executionARN(name)+"'")
		return
	}
	ctx, cancel := context.WithCancel(s.base)
	e := &execution{name: name, input: input, status: "RUNNING", start: time.Now(), cancel: cancel}
	s.execs[name] = e
	s.mu.Unlock()
	s.log.Info("execution started", "execution", name)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := s.exec.Run(ctx, name, json.RawMessage(input))
		s.mu.Lock()
		defer s.mu.Unlock()
		e.stop = time.Now()
		if res.Status == "" {
			e.status, e.errName, e.cause = "FAILED", "States.Runtime", err.Error()
		} else {
			e.status = string(res.Status)
			if res.Error != nil {
				e.errName, e.cause = res.Error.Name, res.Error.Cause
			}
		}
		s.log.Info("execution ended", "execution", name, "status", e.status, "error", e.errName)
	}()
	writeJSON(w, map[string]any{"executionArn": s.executionARN(name), "startDate": float64(e.start.UnixMilli()) / 1000})
}

func (s *Service) lookup(arn string) (*execution, bool) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	if s.executionARN(name) != arn {
		return nil, false
	}
	e, ok := s.execs[name]
	return e, ok
}

func (s *Service) describe(w http.ResponseWriter, arn string) {
	s.mu.Lock()
	e, ok := s.lookup(arn)
	if !ok {
		s.mu.Unlock()
		writeErr(w, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+arn+"'")
		return
	}
	out := map[string]any{"executionArn": arn, "stateMachineArn": s.arn, "name": e.name, "status": e.status,
		"startDate": float64(e.start.UnixMilli()) / 1000, "input": e.input}
	if !e.stop.IsZero() {
		out["stopDate"] = float64(e.stop.UnixMilli()) / 1000
	}
	if e.errName != "" {
		out["error"], out["cause"] = e.errName, e.cause
	}
	s.mu.Unlock()
	writeJSON(w, out)
}

func (s *Service) stopExec(w http.ResponseWriter, arn string) {
	s.mu.Lock()
	e, ok := s.lookup(arn)
	s.mu.Unlock()
	if !ok {
		writeErr(w, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+arn+"'")
		return
	}
	e.cancel()
	writeJSON(w, map[string]any{"stopDate": float64(time.Now().UnixMilli()) / 1000})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.swf.service.v2.model#" + typ, "message": msg})
}
