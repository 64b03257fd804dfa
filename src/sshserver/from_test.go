package sshserver

import (
	"net"
	"regexp"
	"strings"
	"testing"
)

func TestFromPatterns(t *testing.T) {
	cases := []struct {
		list    string
		allowed []string
		refused []string
	}{
		{"127.0.0.1", []string{"127.0.0.1"}, []string{"127.0.0.2", "::1"}},
		{"192.168.1.0/24", []string{"192.168.1.1", "192.168.1.255"}, []string{"192.168.2.1", "10.0.0.1"}},
		{"192.168.1.*", []string{"192.168.1.7", "192.168.1.200"}, []string{"192.168.10.7"}},
		{"192.168.1.?", []string{"192.168.1.7"}, []string{"192.168.1.70"}},
		{"10.0.0.0/8,!10.0.0.9", []string{"10.1.2.3"}, []string{"10.0.0.9", "11.0.0.1"}},
		{"!10.0.0.9,*", []string{"1.2.3.4", "fd00::1"}, []string{"10.0.0.9"}},
		{"fd00::/8", []string{"fd12::1"}, []string{"fe80::1", "10.0.0.1"}},
		{"FD00::1", []string{"fd00::1"}, nil},
		{" 10.0.0.1 , 10.0.0.2 ", []string{"10.0.0.1", "10.0.0.2"}, []string{"10.0.0.3"}},
		{"*.example.com", nil, []string{"10.0.0.1"}}, // no reverse DNS, as OpenSSH with UseDNS no
		{"!*", nil, []string{"127.0.0.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.list, func(t *testing.T) {
			ps, err := parseFromPatterns(tc.list)
			if err != nil {
				t.Fatal(err)
			}
			for _, ip := range tc.allowed {
				if !ps.allows(&net.TCPAddr{IP: net.ParseIP(ip), Port: 22}) {
					t.Errorf("%s refused", ip)
				}
			}
			for _, ip := range tc.refused {
				if ps.allows(&net.TCPAddr{IP: net.ParseIP(ip), Port: 22}) {
					t.Errorf("%s allowed", ip)
				}
			}
		})
	}
	// A v4-mapped address (dual-stack listener) matches v4 patterns.
	ps, _ := parseFromPatterns("192.168.1.0/24")
	if !ps.allows(&net.TCPAddr{IP: net.ParseIP("::ffff:192.168.1.5")}) {
		t.Error("v4-mapped client address did not match a v4 network")
	}
	if ps.allows(nil) {
		t.Error("a connection without an address was allowed")
	}
}

// wildcardRegexp is an independent statement of the wildcard rules, to check wildcardMatch against.
func wildcardRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func FuzzFromPatterns(f *testing.F) {
	f.Add("10.0.0.0/8,!10.0.0.9", "10.0.0.9")
	f.Add("192.168.1.*", "192.168.1.77")
	f.Add("*a*b?c*", "xxabyc")
	f.Add("fd00::/8,::1", "fd00::abcd")
	f.Add("!*", "127.0.0.1")
	f.Fuzz(func(t *testing.T, list, ip string) {
		ps, err := parseFromPatterns(list)
		if err != nil {
			return
		}
		addr := &net.TCPAddr{IP: net.ParseIP(ip)}
		got := ps.allows(addr)
		if addr.IP == nil && got {
			t.Fatalf("unparseable address %q allowed by %q", ip, list)
		}
		// The matcher must agree with the regexp oracle on ASCII text (the oracle works on
		// runes, the matcher on bytes, which only differ on multi-byte input).
		for _, p := range ps {
			if p.wildcard == "" || !isASCII(p.wildcard) || !isASCII(ip) {
				continue
			}
			if want := wildcardRegexp(p.wildcard).MatchString(ip); wildcardMatch(p.wildcard, ip) != want {
				t.Fatalf("wildcardMatch(%q, %q) = %v, regexp says %v", p.wildcard, ip, !want, want)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
