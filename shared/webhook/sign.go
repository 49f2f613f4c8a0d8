// Package webhook signs and sends webhook deliveries the Standard
// Webhooks way (https://www.standardwebhooks.com): the headers
// webhook-id, webhook-timestamp and webhook-signature
// ("v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed with the bytes
// of the endpoint's "whsec_" secret), and keeps every delivery away from
// the service's own network: only https, and never an address that is
// loopback, private, link-local (the cloud metadata service), CGNAT,
// multicast or unspecified, checked when a URL is registered and again on
// every connection, after DNS resolution.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// secretBytes is the length of a new secret's key: 24 bytes, 192 bits,
// the length the reference libraries generate.
const secretBytes = 24

// NewSecret returns a fresh signing secret: "whsec_" and the base64 of 24
// random bytes.
func NewSecret() string {
	key := make([]byte, secretBytes)
	rand.Read(key) // never fails (crypto/rand)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// key is the HMAC key of secret: the bytes its base64 holds.
func key(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("webhook secret does not start with " + SecretPrefix)
	}
	k, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("webhook secret is not base64: %w", err)
	}
	return k, nil
}

// Sign is the webhook-signature value of body sent as message id at ts.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	return "v1," + signature(k, id, ts.Unix(), body), nil
}

func signature(k []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, k)
	fmt.Fprintf(mac, "%s.%d.", id, ts)
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Headers are the three headers of body sent as message id at ts.
func Headers(secret, id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock, as the reference libraries accept.
const Tolerance = 5 * time.Minute

// Verify checks that body with headers h was signed with secret, at a
// timestamp within Tolerance of now. Any of several space-separated v1
// signatures may match (a receiver rotating its secret).
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	k, err := key(secret)
	if err != nil {
		return err
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("bad %s: %w", HeaderTimestamp, err)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("%s is %s away from now", HeaderTimestamp, d.Round(time.Second))
	}
	want := signature(k, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		v, sig, ok := strings.Cut(s, ",")
		if ok && v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no matching webhook signature")
}
