package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// forbidden are the networks a delivery never reaches (besides what
// netip's own predicates name): the service's neighbours and the cloud's
// metadata services.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // CGNAT, shared address space
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64: may embed any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("fd00:ec2::254/128"), // the AWS metadata service over IPv6 (also in fc00::/7)
}

// Forbidden reports whether a delivery must never connect to ip: it is
// loopback, private (RFC 1918, fc00::/7), link-local (including
// 169.254.169.254, the metadata service), unspecified, multicast, CGNAT
// or another reserved range. An IPv4-mapped IPv6 address is judged as
// its IPv4 address.
func Forbidden(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() {
		return true
	}
	for _, p := range forbidden {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// URLError says why a webhook URL is refused, in words a client is shown.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return "webhook URL " + e.Reason }

// CheckURL reports why raw cannot be a webhook URL, or nil: it must be an
// absolute https URL (http too when allowPrivate) without credentials,
// and unless allowPrivate its host must be a public address or a name
// that resolves only to public addresses. r resolves names (nil:
// net.DefaultResolver). The dialer checks again at every connection
// (Sender), since what a name resolves to can change.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, r Resolver) error {
	if raw == "" {
		return &URLError{"is empty"}
	}
	if len(raw) > MaxURLLength {
		return &URLError{fmt.Sprintf("is longer than %d characters", MaxURLLength)}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return &URLError{"must be an absolute URL such as https://example.com/hook"}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return &URLError{"must use https"}
	}
	if u.User != nil {
		return &URLError{"must not carry a user name or password"}
	}
	if u.Fragment != "" {
		return &URLError{"must not have a fragment"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{"has no host"}
	}
	if allowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if Forbidden(ip) {
			return &URLError{fmt.Sprintf("points at %s, a private, loopback, link-local or reserved address", ip)}
		}
		return nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound || err == nil {
			return &URLError{fmt.Sprintf("host %q does not resolve", host)}
		}
		return &URLError{fmt.Sprintf("host %q could not be resolved", host)}
	}
	for _, ip := range addrs {
		if Forbidden(ip) {
			return &URLError{fmt.Sprintf("host %q resolves to %s, a private, loopback, link-local or reserved address", host, ip.Unmap())}
		}
	}
	return nil
}
