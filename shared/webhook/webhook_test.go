package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/testing/webhooktest"
	"github.com/genvideo/gen/shared/webhook"
)

func TestSignVerifiesHereAndWithTheReferenceLibrary(t *testing.T) {
	secret := webhook.NewSecret()
	now := time.Now()
	body := []byte(`{"type":"generation.completed","timestamp":"2025-01-01T00:00:00Z","data":{"taskId":"x"}}`)
	h, err := webhook.Headers(secret, "msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify(secret, h, body, now); err != nil {
		t.Fatalf("own verify: %v", err)
	}
	tampered := append([]byte(nil), body...)
	tampered[10] = 'X'
	other := webhook.NewSecret()
	oldH, _ := webhook.Headers(secret, "msg_1", now.Add(-time.Hour), body)

	got := webhooktest.Verify(t, []webhooktest.Message{
		{Secret: secret, Header: h, Body: body},
		{Secret: secret, Header: h, Body: tampered},
		{Secret: other, Header: h, Body: body},
		{Secret: secret, Header: oldH, Body: body},
	})
	want := []bool{true, false, false, false}
	for i := range want {
		if (got[i] == "ok") != want[i] {
			t.Errorf("message %d: reference says %q, want ok=%v", i, got[i], want[i])
		}
	}
	if webhook.Verify(secret, h, tampered, now) == nil || webhook.Verify(other, h, body, now) == nil ||
		webhook.Verify(secret, oldH, body, now) == nil {
		t.Error("own verify accepts what the reference refuses")
	}
}

func TestNewSecretShape(t *testing.T) {
	s := webhook.NewSecret()
	if !strings.HasPrefix(s, "whsec_") || len(s) != len("whsec_")+32 || s == webhook.NewSecret() {
		t.Fatalf("secret %q", s)
	}
}

func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"127.9.9.9", true}, {"::1", true},
		{"10.0.0.1", true}, {"172.16.5.4", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fd00:ec2::254", true}, {"fc00::1", true},
		{"0.0.0.0", true}, {"::", true}, {"224.0.0.1", true}, {"ff02::1", true},
		{"100.64.0.1", true}, {"255.255.255.255", true}, {"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true}, {"64:ff9b::a00:1", true},
		// Issue 20: every IPv6 range that is not global unicast, and every
		// one that embeds an IPv4 address, whatever that address is.
		{"::127.0.0.1", true}, {"::8.8.8.8", true}, {"::ffff:8.8.8.8", true}, {"::ffff:0:8.8.8.8", true},
		{"2002:7f00:1::", true}, {"2002:808:808::1", true}, {"2001::53aa:64c:0:1", true},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, {"64:ff9b::808:808", true}, {"64:ff9b:1::1", true},
		{"2001:db8::1", true}, {"3fff::1", true}, {"100::1", true}, {"fd12:3456::1", true},
		{"2001:2::1", true}, {"2001:10::1", true}, {"fe80::1%eth0", true}, {"2606:4700::1111%eth0", true},
		{"192.0.2.1", true}, {"198.51.100.7", true}, {"203.0.113.9", true}, {"192.88.99.1", true},
		{"8.8.8.8", false}, {"93.184.216.34", false}, {"2606:4700::1111", false}, {"172.32.0.1", false},
		{"2a00:1450:4001:80b::200e", false}, {"2001:4860:4860::8888", false},
	} {
		if got := webhook.Forbidden(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Forbidden(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

// fakeResolver answers from a map.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ips {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	r := fakeResolver{
		"hooks.example.com": {"93.184.216.34"},
		"evil.example.com":  {"93.184.216.34", "169.254.169.254"},
		"inside.example":    {"10.0.0.1"},
		"localhost":         {"127.0.0.1", "::1"},
		"six.example":       {"2001:4860:4860::8888", "2002:a00:1::"},
	}
	for _, tc := range []struct {
		url     string
		private bool
		want    string // "" for accepted, else a piece of the reason
	}{
		{"https://hooks.example.com/x", false, ""},
		{"https://93.184.216.34:8443/x?a=b", false, ""},
		{"http://hooks.example.com/x", false, "https"},
		{"ftp://hooks.example.com/x", false, "https"},
		{"https://127.0.0.1/x", false, "127.0.0.1"},
		{"https://169.254.169.254/latest/meta-data", false, "169.254.169.254"},
		{"https://10.0.0.1/x", false, "10.0.0.1"},
		{"https://[::1]/x", false, "::1"},
		{"https://[fd00:ec2::254]/x", false, "fd00:ec2::254"},
		{"https://[::127.0.0.1]/x", false, "::7f00:1"},
		{"https://[::ffff:127.0.0.1]/x", false, "::ffff:127.0.0.1"},
		{"https://[::ffff:8.8.8.8]/x", false, "::ffff:8.8.8.8"},
		{"https://[2002:7f00:1::]/x", false, "2002:7f00:1::"},
		{"https://[2001:4860:4860::8888]/x", false, ""},
		{"https://six.example/x", false, "resolves to 2002:a00:1::"},
		{"https://localhost/x", false, "resolves to 127.0.0.1"},
		{"https://inside.example/x", false, "resolves to 10.0.0.1"},
		{"https://evil.example.com/x", false, "169.254.169.254"},
		{"https://nowhere.example/x", false, "does not resolve"},
		{"https://user:pw@hooks.example.com/x", false, "user name"},
		{"/relative", false, "absolute"},
		{"", false, "empty"},
		{"https://hooks.example.com/" + strings.Repeat("a", 2100), false, "longer"},
		{"http://127.0.0.1:9999/x", true, ""},
		{"https://localhost/x", true, ""},
	} {
		err := webhook.CheckURL(t.Context(), tc.url, tc.private, r)
		var ue *webhook.URLError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%.60q, private=%v) = %v, want accepted", tc.url, tc.private, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%.60q, private=%v) = %v, want a URLError with %q", tc.url, tc.private, err, tc.want)
		}
	}
}

func TestSenderRefusesLoopbackAtDialTime(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the receiver on loopback was reached")
	}))
	defer srv.Close()
	var s webhook.Sender
	res := s.Send(t.Context(), srv.URL, nil, []byte(`{}`))
	if !errors.Is(res.Err, webhook.ErrForbiddenAddress) || res.Status != 0 {
		t.Fatalf("result %+v, want ErrForbiddenAddress", res)
	}
	// A name that resolves to loopback is refused too: the check is on
	// the address dialled.
	res = s.Send(t.Context(), strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), nil, []byte(`{}`))
	if !errors.Is(res.Err, webhook.ErrForbiddenAddress) {
		t.Fatalf("via localhost: %+v, want ErrForbiddenAddress", res)
	}
	if res := s.Send(t.Context(), "http://93.184.216.34/", nil, nil); res.Err == nil || !strings.Contains(res.Err.Error(), "https") {
		t.Fatalf("plain http: %+v", res)
	}
}

func TestSenderAnswers(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") != "msg_1" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", r.Header)
		}
		w.WriteHeader(204)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		for range 1000 { // 1 MB: only the cap is read
			w.Write([]byte(strings.Repeat("x", 1000)))
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := webhook.Sender{AllowPrivate: true, Timeout: 500 * time.Millisecond}
	h := http.Header{}
	h.Set("webhook-id", "msg_1")

	if res := s.Send(t.Context(), srv.URL+"/ok", h, []byte(`{}`)); res.Err != nil || res.Status != 204 {
		t.Errorf("ok: %+v", res)
	}
	if res := s.Send(t.Context(), srv.URL+"/big", h, nil); res.Err == nil || res.Status != 500 || len(res.Body) != webhook.MaxResponseBytes {
		t.Errorf("big: status %d, err %v, %d bytes read", res.Status, res.Err, len(res.Body))
	}
	if res := s.Send(t.Context(), srv.URL+"/redirect", h, nil); res.Err == nil || res.Status != http.StatusFound {
		t.Errorf("redirect: %+v, want a failed 302 (not followed)", res)
	}
	if res := s.Send(t.Context(), srv.URL+"/slow", h, nil); res.Err == nil || res.Status != 0 {
		t.Errorf("slow: %+v, want a timeout", res)
	}
}

func TestFetch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("0123456789"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/image.png", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	open := webhook.Sender{AllowPrivate: true, Timeout: time.Second}
	for _, tc := range []struct {
		path  string
		limit int64
		want  string // the body, or a piece of the error
		ok    bool
	}{
		{"/image.png", 100, "0123456789", true},
		{"/image.png", 4, "0123", true},
		{"/missing", 100, "answered 404", false},
		{"/redirect", 100, "answered 302", false},
	} {
		body, ct, err := open.Fetch(t.Context(), srv.URL+tc.path, tc.limit)
		switch {
		case tc.ok && (err != nil || string(body) != tc.want || ct != "image/png"):
			t.Errorf("Fetch(%s, %d) = %q, %q, %v; want %q", tc.path, tc.limit, body, ct, err, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Fetch(%s) = %v, want an error with %q", tc.path, err, tc.want)
		}
	}

	// By default the rules of a delivery hold: no plain http, no loopback
	// however it is named, checked before anything is sent.
	var s webhook.Sender
	var ue *webhook.URLError
	if _, _, err := s.Fetch(t.Context(), srv.URL+"/image.png", 100); !errors.As(err, &ue) {
		t.Errorf("Fetch(http on loopback) = %v, want a URLError", err)
	}
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the server on loopback was reached")
	}))
	defer tls.Close()
	for _, u := range []string{tls.URL, strings.Replace(tls.URL, "127.0.0.1", "localhost", 1), "https://169.254.169.254/latest/meta-data"} {
		if _, _, err := s.Fetch(t.Context(), u, 100); !errors.As(err, &ue) || !strings.Contains(err.Error(), "private, loopback") {
			t.Errorf("Fetch(%s) = %v, want a URLError naming the address", u, err)
		}
	}
}
