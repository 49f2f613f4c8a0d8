// Package localsecrets is the part of the Secrets Manager JSON API the
// functions call, GetSecretValue, served from memory: the functions' tests
// (awsstacktest) and the AWS assembly on one machine (infra/aws-local)
// hold the URL signer's keys in it.
package localsecrets

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Server serves GetSecretValue; it is an http.Handler.
type Server struct {
	mu      sync.Mutex
	secrets map[string]string
	reads   int
}

// New returns an empty server.
func New() *Server { return &Server{secrets: map[string]string{}} }

// Put stores a secret's string under its ARN.
func (s *Server) Put(arn, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[arn] = value
}

// Reads counts the GetSecretValue calls served.
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// ServeHTTP answers GetSecretValue as Secrets Manager does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetSecretValue") {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"__type": "InvalidRequestException", "message": "only GetSecretValue is served here"})
		return
	}
	var in struct{ SecretId string }
	json.NewDecoder(r.Body).Decode(&in)
	s.mu.Lock()
	v, ok := s.secrets[in.SecretId]
	s.reads++
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"__type": "ResourceNotFoundException",
			"message": "Secrets Manager can't find the specified secret."})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"ARN": in.SecretId, "Name": "gen-url-signer", "SecretString": v,
		"VersionId": "00000000-0000-4000-8000-000000000001", "VersionStages": []string{"AWSCURRENT"},
	})
}
