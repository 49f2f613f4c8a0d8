package httpapi

import (
	"net/http/httptest"
	"testing"
)

// An endpoint served outside the router (a Lambda) reads its path's
// wildcards as the router would have set them.
func TestSetPathValues(t *testing.T) {
	const replay = "/api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay"
	for _, c := range []struct {
		pattern, path, webhook, delivery string
	}{
		{replay, "/api/gen/webhooks/wh_1/deliveries/msg_2/replay", "wh_1", "msg_2"},
		{replay, "/api/gen/webhooks/wh_1/deliveries/msg_2", "", ""},              // another shape
		{replay, "/api/gen/webhooks/wh_1/attempts/msg_2/replay", "", ""},         // another static segment
		{"/api/gen/webhooks/{webhookId}", "/api/gen/webhooks/wh_1/", "wh_1", ""}, // a trailing slash
		{"/api/gen/webhooks", "/api/gen/webhooks", "", ""},
		{"/api/gen/webhooks/{webhookId}", "/api/gen/webhooks", "", ""},                      // a segment short
		{"/api/gen/webhooks/{webhookId}", "/api/gen/hooks/wh_1", "", ""},                    // the static segment before differs
		{"/{webhookId}/deliveries/{deliveryId}", "/wh_1/deliveries/msg_2", "wh_1", "msg_2"}, // wildcards at both ends
		{"/{webhookId}/deliveries/{deliveryId}", "/wh_1/deliveries/msg_2/x", "", ""},        // a segment more
	} {
		r := httptest.NewRequest("POST", c.path, nil)
		setPathValues(r, c.pattern)
		if r.PathValue("webhookId") != c.webhook || r.PathValue("deliveryId") != c.delivery {
			t.Errorf("%s on %s: webhookId %q, deliveryId %q; want %q, %q", c.path, c.pattern,
				r.PathValue("webhookId"), r.PathValue("deliveryId"), c.webhook, c.delivery)
		}
	}
}
