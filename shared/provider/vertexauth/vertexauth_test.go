package vertexauth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/genvideo/gen/shared/provider/vertexauth"
)

func TestEndpoint(t *testing.T) {
	tests := []struct{ location, want string }{
		{"global", "https://aiplatform.googleapis.com"},
		{"us", "https://aiplatform.us.rep.googleapis.com"},
		{"eu", "https://aiplatform.eu.rep.googleapis.com"},
		{"us-central1", "https://us-central1-aiplatform.googleapis.com"},
	}
	for _, tt := range tests {
		if got := vertexauth.Endpoint(tt.location); got != tt.want {
			t.Errorf("Endpoint(%q) = %q, want %q", tt.location, got, tt.want)
		}
	}
}

// TestClientCarriesToken: a static token rides every request as a
// bearer token.
func TestClientCarriesToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") }))
	t.Cleanup(srv.Close)
	c, err := vertexauth.Client(t.Context(), vertexauth.Credentials{AccessToken: "ya29.test"}, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "Bearer ya29.test" {
		t.Errorf("Authorization = %q, want Bearer ya29.test", got)
	}
}
