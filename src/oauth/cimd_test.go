package oauth

import (
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
