package main

import (
	"io"
	"net"
	"net/http"
	"time"
)

// bare is the yardstick: a plain net/http server that answers each
// workload's route with the very bytes the service answered it with, and
// does nothing else, so that a ratio says what the service costs beyond
// what any Go server costs on this machine.
func bare(ln net.Listener, bodies map[string][]byte) *http.Server {
	mux := http.NewServeMux()
	for pattern, body := range bodies {
		status := http.StatusOK
		if pattern == startPattern {
			status = http.StatusAccepted
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(body)
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv
}
