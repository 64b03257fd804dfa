package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// claude.ai and the Claude apps call hamcp from Anthropic's servers, so the address a user gives them
// must be public https, and hamcp's OAuth metadata fetched at that address must name it: a proxy that
// rewrites the Host, or an external_url that differs from the address people paste, is the commonest
// reason a connector fails. These checks say exactly which of those is wrong.

// cgnat is 100.64.0.0/10: carrier-grade NAT, and the range Tailscale gives its own machines — an
// address there is reachable from a tailnet, not from claude.ai.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// privateAddr says why an address cannot be reached from the internet, "" when it can.
func privateAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "a loopback address (this machine only)"
	case a.IsPrivate():
		return "a private address (your local network only)"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.Is4() && cgnat.Contains(a):
		return "a CGNAT or Tailscale address (100.64.0.0/10), reachable from your tailnet, not from claude.ai"
	case a.IsUnspecified(), a.IsMulticast():
		return "not a host address"
	}
	return ""
}

// localNames are suffixes only a local network resolves.
var localNames = []string{".local", ".lan", ".home", ".home.arpa", ".internal", ".localdomain", ".localhost"}

// publicURLProblems checks external_url without sending it anything: https, a public host name or
// address, and (through lookup) a name that resolves to at least one public address. Each problem is
// a sentence for the user.
func publicURLProblems(ctx context.Context, raw string, lookup func(ctx context.Context, host string) ([]netip.Addr, error)) []string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return []string{fmt.Sprintf("%q is not an address: write it like https://mcp.example.com", raw)}
	}
	var out []string
	if u.Scheme != "https" {
		out = append(out, "it starts with "+u.Scheme+"://: claude.ai connects only over https")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		if why := privateAddr(a); why != "" {
			return append(out, host+" is "+why)
		}
		return append(out, host+" is a bare IP address: claude.ai needs a host name with a certificate for it")
	}
	if host == "localhost" || !strings.Contains(host, ".") {
		return append(out, host+" is a name only this network knows")
	}
	for _, s := range localNames {
		if strings.HasSuffix(host, s) {
			return append(out, host+" ends in "+s+", a name only your local network resolves")
		}
	}
	if lookup == nil {
		return out
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := lookup(lctx, host)
	if err != nil || len(addrs) == 0 {
		return append(out, host+" does not resolve here; check its DNS record")
	}
	var why string
	for _, a := range addrs {
		if w := privateAddr(a); w == "" {
			return out // one public address is enough for claude.ai
		} else if why == "" {
			why = w
		}
	}
	return append(out, host+" resolves only to "+why+" (from this machine's DNS); claude.ai cannot reach that")
}

func dnsLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkMetadata fetches hamcp's OAuth metadata through the public address, as claude.ai will, and
// checks that it names that address: the protected resource's resource and authorization server,
// and the authorization server's issuer.
func checkMetadata(ctx context.Context, client *http.Client, ext string) error {
	ext = strings.TrimSuffix(ext, "/")
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := getJSON(ctx, client, ext+"/.well-known/oauth-protected-resource/mcp", &prm); err != nil {
		return err
	}
	if prm.Resource != ext+"/mcp" {
		return fmt.Errorf("the metadata at this address says its resource is %q, not %q: set external_url to the address "+
			"you paste into claude.ai, or make your proxy pass the original Host", prm.Resource, ext+"/mcp")
	}
	if len(prm.AuthorizationServers) == 0 || prm.AuthorizationServers[0] != ext {
		return fmt.Errorf("the metadata at this address names the authorization server %q, not %q", strings.Join(prm.AuthorizationServers, ", "), ext)
	}
	var as struct {
		Issuer string `json:"issuer"`
	}
	if err := getJSON(ctx, client, ext+"/.well-known/oauth-authorization-server", &as); err != nil {
		return err
	}
	if as.Issuer != ext {
		return fmt.Errorf("the authorization server at this address calls itself %q, not %q", as.Issuer, ext)
	}
	return nil
}

func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("%s: no answer in time", u)
		}
		return fmt.Errorf("%s: cannot connect (%s)", u, shortNetErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d, not hamcp: does the address (or its proxy) forward this path to the add-on?", u, resp.StatusCode)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 64<<10)).Decode(v); err != nil {
		return fmt.Errorf("%s did not answer with hamcp's JSON", u)
	}
	return nil
}

// shortNetErr keeps the part of a dial or TLS error a user can act on.
func shortNetErr(err error) string {
	s := err.Error()
	for _, k := range []string{"certificate", "no such host", "connection refused", "timeout"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func (a *App) lookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	if a.panel.lookup != nil {
		return a.panel.lookup(ctx, host)
	}
	return dnsLookup(ctx, host)
}

func (a *App) publicClient() *http.Client {
	if a.panel.client != nil {
		return a.panel.client
	}
	return checkClient
}
