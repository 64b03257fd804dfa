package oauth

import (
	"cmp"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// docServer serves client metadata documents and counts fetches.
type docServer struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	doc    string
	n      int
	byPath map[string]func(w http.ResponseWriter)
}

func (d *docServer) set(status int, doc string) {
	d.mu.Lock()
	d.status, d.doc = status, doc
	d.mu.Unlock()
}

func (d *docServer) hits() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *docServer) handle(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.n++
	h := d.byPath[r.URL.Path]
	status, doc := d.status, d.doc
	d.mu.Unlock()
	if h != nil {
		h(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(doc))
}

func httptestTLS(t *testing.T) *docServer {
	d := &docServer{status: 404, byPath: map[string]func(http.ResponseWriter){}}
	d.Server = httptest.NewTLSServer(http.HandlerFunc(d.handle))
	t.Cleanup(d.Close)
	return d
}

func httptestPlain(t *testing.T) *docServer {
	d := &docServer{status: 404, byPath: map[string]func(http.ResponseWriter){}}
	d.Server = httptest.NewServer(http.HandlerFunc(d.handle))
	t.Cleanup(d.Close)
	return d
}

// TestCIMDOverLoopbackHTTP runs the whole flow with a metadata document served over plain http
// from a host the test allows, and checks every way a document can be refused.
func TestCIMDOverLoopbackHTTP(t *testing.T) {
	docs := httptestPlain(t)
	host := strings.TrimPrefix(docs.URL, "http://")
	e := newEnv(t, func(o *Options) { o.CIMDAllowHTTPHosts = []string{host}; o.cimdAllowLoopback = true })
	const redirect = "http://127.0.0.1:41999/cb"
	doc := func(id string, extra string) string {
		return `{"client_id":"` + id + `","client_name":"Doc Client","redirect_uris":["` + redirect + `"]` + extra + `}`
	}
	serve := func(path string, status int, body string, hdr map[string]string) string {
		docs.mu.Lock()
		docs.byPath[path] = func(w http.ResponseWriter) {
			for k, v := range hdr {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
		}
		docs.mu.Unlock()
		return docs.URL + path
	}

	good := docs.URL + "/good.json"
	serve("/good.json", 200, doc(good, ""), nil)
	c := e.clientFor(good, redirect)
	before := docs.hits()
	tok := e.grant(c)
	if e.mcpStatus(tok.AccessToken) != 200 {
		t.Fatal("CIMD client's token refused")
	}
	e.grant(c)
	if got := docs.hits() - before; got != 1 {
		t.Errorf("document fetched %d times for two logins; it should be cached", got)
	}

	big := docs.URL + "/big.json"
	serve("/big.json", 200, doc(big, `,"pad":"`+strings.Repeat("x", 70<<10)+`"`), nil)
	wrongID := serve("/wrong-id.json", 200, doc("https://someone.else/client.json", ""), nil)
	missing := serve("/missing.json", 404, "not found", nil)
	moved := serve("/moved.json", 302, "", map[string]string{"Location": good})
	secret := docs.URL + "/secret.json"
	serve("/secret.json", 200, doc(secret, `,"client_secret":"s3cret"`), nil)
	jwt := docs.URL + "/jwt.json"
	serve("/jwt.json", 200, doc(jwt, `,"token_endpoint_auth_method":"private_key_jwt"`), nil)
	otherHost := "http://127.0.0.2:1/client.json"

	tests := []struct {
		name, clientID, redirect, want string
	}{
		{"larger than 64 KB", big, redirect, "64 KB"},
		{"client_id is not its URL", wrongID, redirect, "is not the URL it was fetched from"},
		{"not found", missing, redirect, "could not be fetched"},
		{"redirects are not followed", moved, redirect, "could not be fetched"},
		{"holds a secret", secret, redirect, "client_secret"},
		{"needs private_key_jwt", jwt, redirect, "private_key_jwt"},
		{"plain http from another host", otherHost, redirect, "must be an https URL"},
		{"redirect not listed in the document", good, "http://127.0.0.1:41999/other", "not one of the addresses it registered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := e.clientFor(tt.clientID, tt.redirect)
			b := newBrowser(t)
			b.home = []string{e.issuer, e.haURL}
			page := b.get(cl.authURL(oauth2.GenerateVerifier(), "s"), outside)
			if page.url != nil || page.status != 400 || !strings.Contains(page.body, tt.want) {
				t.Fatalf("got %d %v %q, want an error page saying %q", page.status, page.url, page.body, tt.want)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", cimdTTL},
		{"max-age=600", 10 * time.Minute},
		{"public, max-age=5", cimdMinTTL},
		{"max-age=9999999", cimdMaxTTL},
		{"no-store", cimdMinTTL},
		{"max-age=abc", cimdTTL},
	}
	for _, tt := range tests {
		if got := cacheTTL(tt.header); got != tt.want {
			t.Errorf("cacheTTL(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func FuzzParseCIMD(f *testing.F) {
	id := "https://claude.ai/oauth/mcp-oauth-client-metadata"
	f.Add(`{"client_id":"` + id + `","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]}`)
	f.Add(`{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb","https://evil.example/cb"],"token_endpoint_auth_method":"none"}`)
	f.Add(`{"redirect_uris":[]}`)
	allowed, _ := newHostSet("AllowedRedirectHosts", defaultRedirectHosts)
	f.Fuzz(func(t *testing.T, body string) {
		c, err := parseCIMD([]byte(body), id, allowed)
		if err != nil {
			return
		}
		if c.ID != id || c.AuthMethod != "none" || len(c.RedirectURIs) == 0 {
			t.Fatalf("accepted document yields %+v", c)
		}
		for _, r := range c.RedirectURIs {
			if err := validateRedirectURI(r, allowed); err != nil {
				t.Fatalf("kept a redirect URI the rules refuse: %q: %v", r, err)
			}
		}
		if u, _ := url.Parse(c.RedirectURIs[0]); u == nil {
			t.Fatal("unparsable redirect kept")
		}
	})
}

// TestCIMDPrivateHosts: an administrator lists one host:port of their own client, whose document
// lives on a private address (here loopback) behind a certificate only they trust. That one
// signs in. A stranger's client id naming anything else on the private network (the same address
// by another name or notation, another port, another private address, plain http) is refused
// exactly as before, with the same sentence, and nothing else is ever connected to.
func TestCIMDPrivateHosts(t *testing.T) {
	t.Parallel()
	docs := httptestTLS(t)
	plain := httptestPlain(t)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	port := docs.Listener.Addr().(*net.TCPAddr).Port
	listed := fmt.Sprintf("127.0.0.1:%d", port)
	const redirect = "http://127.0.0.1:5/cb"
	good := "https://" + listed + "/client.json"
	docs.set(200, `{"client_id":"`+good+`","client_name":"Kitchen agent","redirect_uris":["`+redirect+`"]}`)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docs.Certificate().Raw}))
	// The stranger's hosts are allowed client hosts, so only the address check stands in the way.
	hosts := append([]string{"10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1"}, defaultRedirectHosts...)
	e := newEnv(t, func(o *Options) {
		o.AllowedRedirectHosts, o.CIMDPrivateHosts, o.CIMDRootCAs = hosts, []string{listed}, ca
	})

	if tok := e.grant(e.clientFor(good, redirect)); e.mcpStatus(tok.AccessToken) != 200 {
		t.Fatal("the listed client's token is refused")
	}
	if n := docs.hits(); n != 1 {
		t.Fatalf("the listed document was fetched %d times, want 1", n)
	}

	attacks := []struct{ name, id, want string }{
		{"same address, other name", fmt.Sprintf("https://localhost:%d/client.json", port), "could not be fetched"},
		{"same address, IPv4-mapped", fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/client.json", port), "could not be fetched"},
		{"same address, IPv6 loopback", fmt.Sprintf("https://[::1]:%d/client.json", port), "could not be fetched"},
		{"same host, open port", "https://" + strings.TrimPrefix(plain.URL, "http://") + "/client.json", "could not be fetched"},
		{"same host, closed port", "https://" + closedAddr + "/client.json", "could not be fetched"},
		{"same host, default port", "https://127.0.0.1/client.json", "could not be fetched"},
		{"another private address", "https://10.0.0.1/client.json", "could not be fetched"},
		{"cloud metadata", "https://169.254.169.254/latest/meta-data.json", "could not be fetched"},
		{"listed host over plain http", "http://" + listed + "/client.json", "must be an https URL"},
	}
	want := ""
	for _, tt := range attacks {
		cl := e.clientFor(tt.id, redirect)
		b := newBrowser(t)
		b.home = []string{e.issuer, e.haURL}
		page := b.get(cl.authURL(oauth2.GenerateVerifier(), "s"), outside)
		m := cimdErrRe.FindStringSubmatch(page.body)
		if page.status != http.StatusBadRequest || m == nil || !strings.Contains(m[1], tt.want) {
			t.Fatalf("%s (%s): got %d %v %.300q, want the metadata error page saying %q", tt.name, tt.id, page.status, page.url, page.body, tt.want)
		}
		if tt.want == "could not be fetched" {
			if want == "" {
				want = m[1]
			}
			if m[1] != want {
				t.Errorf("%s: error %q differs from %q: it tells addresses or ports apart", tt.name, m[1], want)
			}
		}
	}
	if n := docs.hits() + plain.hits(); n != 1 {
		t.Fatalf("hamcp connected %d times, want only the one fetch of the listed document", n-1)
	}
}

func TestCIMDPrivateHostsOption(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry string
		keys  []string // URLs hasURL must accept; empty: the entry is refused
	}{
		{"client.lan:8443", []string{"https://client.lan:8443/c.json", "https://CLIENT.lan:8443/c.json"}},
		{"client.lan", []string{"https://client.lan/c.json", "https://client.lan:443/c.json"}},
		{"192.168.1.20:9000", []string{"https://192.168.1.20:9000/c.json"}},
		{"[fd00::5]:8443", []string{"https://[fd00::5]:8443/c.json"}},
		{"https://client.lan:8443", nil},
		{"client.lan:8443/c.json", nil},
		{"*.lan:8443", nil},
		{"user@client.lan:8443", nil},
		{"client.lan:", nil},
		{"client.lan:port", nil},
		{":8443", nil},
	}
	for _, tt := range tests {
		set, err := newPrivateHosts([]string{tt.entry})
		if len(tt.keys) == 0 {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "CIMDPrivateHosts" {
				t.Errorf("%q: accepted (%v), want a CIMDPrivateHosts error", tt.entry, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.entry, err)
		}
		for _, k := range tt.keys {
			if u, _ := url.Parse(k); !set.hasURL(u) {
				t.Errorf("%q does not cover %s", tt.entry, k)
			}
		}
		if u, _ := url.Parse("https://other.lan:8443/c.json"); set.hasURL(u) {
			t.Errorf("%q covers another host", tt.entry)
		}
	}
	if _, err := cimdRoots("not a certificate"); err == nil {
		t.Error("a CA that is no PEM certificate is accepted")
	}
}

func TestPrivateDialAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		network, addr string
		ok            bool
	}{
		{"tcp", "192.168.1.20:8443", true}, {"tcp", "127.0.0.1:8443", true}, {"tcp6", "[fd00::5]:443", true},
		{"tcp", "0.0.0.0:443", false}, {"tcp", "[::]:443", false}, {"tcp", "224.0.0.1:443", false},
		{"tcp", "255.255.255.255:443", false}, {"udp", "192.168.1.20:443", false}, {"tcp", "nonsense", false},
	} {
		if err := privateDialAddr(tt.network, tt.addr); (err == nil) != tt.ok {
			t.Errorf("privateDialAddr(%s, %s) = %v, want ok=%v", tt.network, tt.addr, err, tt.ok)
		}
	}
}

// FuzzPrivateHosts: an accepted entry covers exactly the https URLs with its host and port.
func FuzzPrivateHosts(f *testing.F) {
	for _, s := range []string{"client.lan:8443", "client.lan", "[fd00::5]:8443", "a:b:c", "x@y:1", "h:0443"} {
		f.Add(s, "https://client.lan:8443/c.json")
	}
	f.Fuzz(func(t *testing.T, entry, id string) {
		set, err := newPrivateHosts([]string{entry})
		if err != nil || len(set) == 0 {
			return
		}
		u, err := url.Parse(id)
		if err != nil || !set.hasURL(u) {
			return
		}
		if u.Scheme != "https" || !set.hasDialAddr(net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), "443"))) {
			t.Fatalf("%q covers %q but not its dial address", entry, id)
		}
		e, _ := url.Parse("https://" + strings.TrimSpace(entry))
		if !strings.EqualFold(strings.Trim(e.Hostname(), "[]"), u.Hostname()) {
			t.Fatalf("%q covers another host: %q", entry, id)
		}
	})
}
