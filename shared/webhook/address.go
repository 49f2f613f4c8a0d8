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

// forbidden4 are the IPv4 networks a delivery never reaches besides
// what netip's own predicates name (loopback, RFC 1918, link-local with
// the metadata service's 169.254.169.254, multicast): the special-purpose
// ranges of the IANA registry (RFC 6890) that are not global.
var forbidden4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT, shared address space
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
}

// global6 is where the only IPv6 addresses a delivery reaches are:
// global unicast. Everything outside it is refused: ::/8 (loopback,
// unspecified, the deprecated IPv4-compatible ::a.b.c.d), the
// IPv4-mapped ::ffff:0:0/96, NAT64's 64:ff9b::/96 and 64:ff9b:1::/48,
// discard-only 100::/64, ULA fc00::/7 (the AWS metadata service's
// fd00:ec2::254 among them), link-local fe80::/10, multicast ff00::/8.
var global6 = netip.MustParsePrefix("2000::/3")

// forbidden6 are the parts of global6 that are not global unicast, or
// that carry an IPv4 address a relay would reach on the sender's behalf
// (issue 20): rather than judging the embedded address, every range that
// embeds one is refused.
var forbidden6 = []netip.Prefix{
	netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments: Teredo 2001::/32 (embeds IPv4), benchmarking, ORCHID
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("2002::/16"),     // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
}

// Forbidden reports whether a delivery must never connect to ip. An IPv4
// address is refused when it is loopback, private (RFC 1918), link-local
// (169.254.169.254, the metadata service, among them), unspecified,
// multicast, CGNAT or another special-purpose range (forbidden4). An IPv6
// address is accepted only in global unicast (2000::/3) outside the
// ranges that embed an IPv4 address or are reserved (forbidden6): the
// IPv4-mapped, IPv4-compatible, NAT64, 6to4 and Teredo forms of any
// address, public or not, are refused, as is an address with a zone.
func Forbidden(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return true
	}
	if ip.Is4() {
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
			return true
		}
		for _, p := range forbidden4 {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	}
	if !global6.Contains(ip) {
		return true
	}
	for _, p := range forbidden6 {
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
			return &URLError{fmt.Sprintf("host %q resolves to %s, a private, loopback, link-local or reserved address", host, ip)}
		}
	}
	return nil
}
