package lifecycle

import (
	"reflect"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// A move's events go to each endpoint subscribed to its event, in order,
// then to the URL its start carried, under stable ids, due at the move.
func TestEvents(t *testing.T) {
	started, done := t0.Add(time.Second), t0.Add(time.Minute)
	endpoints := []domain.WebhookEndpoint{
		{ID: "wh_1", URL: "https://a.example/1", Events: []string{domain.EventCompleted}},
		{ID: "wh_2", URL: "https://a.example/2", Events: domain.EventTypes},
	}
	moved := func(st task.Status, url string) task.Task {
		tk := inStatus(st, 10, 0)
		tk.StartedAt, tk.WebhookURL = started, url
		if st.Terminal() {
			tk.CompletedAt = done
		}
		return tk
	}
	delivery := func(tk task.Task, event, endpoint, url string, at time.Time) domain.Delivery {
		return domain.Delivery{ID: domain.DeliveryID(tk.ID, event, endpoint), AccountID: "acct-a", EndpointID: endpoint,
			URL: url, Event: event, Task: tk, CreatedAt: at, State: domain.DeliveryPending, NextAt: at}
	}
	processing := moved(task.Processing, "https://task.example/hook")
	completed := moved(task.Completed, "")
	failed := moved(task.Failed, "")
	tests := []struct {
		name string
		t    task.Task
		want []domain.Delivery
	}{
		{"pending reports nothing", moved(task.Pending, "https://task.example/hook"), nil},
		{"processing: the subscribed endpoint, then the task's URL", processing, []domain.Delivery{
			delivery(processing, domain.EventProcessing, "wh_2", "https://a.example/2", started),
			delivery(processing, domain.EventProcessing, "", "https://task.example/hook", started)}},
		{"completed: both endpoints, in order", completed, []domain.Delivery{
			delivery(completed, domain.EventCompleted, "wh_1", "https://a.example/1", done),
			delivery(completed, domain.EventCompleted, "wh_2", "https://a.example/2", done)}},
		{"failed: the one subscribed", failed, []domain.Delivery{
			delivery(failed, domain.EventFailed, "wh_2", "https://a.example/2", done)}},
	}
	for _, tt := range tests {
		if got := Events(tt.t, endpoints); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Events = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
