package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkExecutionsWaiting reports what an execution holds while it
// waits: on a task call (a generation in progress) and in a Wait state
// (a provider's poll interval): goroutines, stack and heap bytes per
// execution (issue 25: thousands are in flight under a load of starts).
// b.N executions are started and left waiting; nothing is asserted.
//
//	go test -run '^$' -bench ExecutionsWaiting ./shared/asl
func BenchmarkExecutionsWaiting(b *testing.B) {
	release := make(chan struct{})
	tasks := map[string]TaskFunc{"wait": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return in, nil
	}}
	for _, tt := range []struct{ name, def string }{
		{"task", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"wait","TimeoutSeconds":3600,"End":true}}}`},
		{"wait", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"Next":"T"},"T":{"Type":"Task","Resource":"wait","End":true}}}`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			e, err := NewExecutor(mustParse(b, tt.def), tasks)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			before := memory()
			for i := range b.N {
				if err := e.Start(context.Background(), fmt.Sprint("execution-", i), json.RawMessage(`{"taskId":"t"}`)); err != nil {
					b.Fatal(err)
				}
			}
			after := memory()
			b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(b.N), "goroutines/exec")
			b.ReportMetric(float64(after.stack-before.stack)/float64(b.N), "stack-B/exec")
			b.ReportMetric(float64(after.heap-before.heap)/float64(b.N), "heap-B/exec")
		})
	}
}

type held struct{ goroutines, stack, heap int64 }

func memory() held {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return held{int64(runtime.NumGoroutine()), int64(ms.StackInuse), int64(ms.HeapAlloc)}
}
