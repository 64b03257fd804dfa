package sshserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// fromPattern is one entry of a from="…" list: an address prefix, or a wildcard pattern
// (* and ?) matched against the client's IP address written out as text.
type fromPattern struct {
	negated  bool
	prefix   netip.Prefix // valid when the entry is an address or CIDR
	wildcard string       // lower-case, used when prefix is not valid
}

type fromPatterns []fromPattern

// parseFromPatterns reads a comma-separated from= list. Like OpenSSH without UseDNS, patterns
// are matched against the client's IP address only; there is no reverse DNS.
func parseFromPatterns(list string) (fromPatterns, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New(`the list is empty; give addresses, networks or patterns, e.g. from="192.168.1.0/24,10.0.0.*"`)
	}
	var out fromPatterns
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		var p fromPattern
		if strings.HasPrefix(item, "!") {
			p.negated, item = true, item[1:]
		}
		if item == "" {
			return nil, errors.New(`empty entry in the list; separate entries with single commas, e.g. from="192.168.1.0/24,!192.168.1.9"`)
		}
		switch {
		case strings.Contains(item, "/"):
			pre, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%s is not a network; write it like 192.168.1.0/24 or fd00::/8", shortQuote(item))
			}
			if pre.Masked() != pre {
				return nil, fmt.Errorf("%s has host bits set; did you mean %s?", shortQuote(item), pre.Masked())
			}
			p.prefix = pre
		default:
			if a, err := netip.ParseAddr(item); err == nil {
				a = a.Unmap().WithZone("")
				p.prefix = netip.PrefixFrom(a, a.BitLen())
			} else {
				p.wildcard = strings.ToLower(item)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// allows applies OpenSSH's rule: any matching negated entry refuses, otherwise any matching
// entry allows, otherwise refuse.
func (ps fromPatterns) allows(addr net.Addr) bool {
	ip, ok := addrIP(addr)
	if !ok {
		return false
	}
	text := ip.String()
	allowed := false
	for _, p := range ps {
		var hit bool
		if p.prefix.IsValid() {
			hit = p.prefix.Contains(ip)
		} else {
			hit = wildcardMatch(p.wildcard, text)
		}
		if hit && p.negated {
			return false
		}
		allowed = allowed || hit
	}
	return allowed
}

func addrIP(addr net.Addr) (netip.Addr, bool) {
	if addr == nil {
		return netip.Addr{}, false
	}
	if t, ok := addr.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(t.IP)
		return ip.Unmap(), ok
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// wildcardMatch reports whether s matches pattern, where * is any run of bytes and ? one byte.
// It backtracks only to the last star, so it runs in O(len(s)·len(pattern)) at worst.
func wildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
