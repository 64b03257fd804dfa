package oauth

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// These tests play the known attacks on an OAuth server against its endpoints, over real sockets, as
// a stranger with no credential would, and check what the rightful user still can do.

const (
	attackerIP = "127.0.0.2"
	victimIP   = "127.0.0.3"
)

// registerFrom registers a public client over hc and returns its id.
func (e *env) registerFrom(t *testing.T, hc *http.Client, name string) string {
	t.Helper()
	body := `{"redirect_uris":["` + claudeCallback + `"],"token_endpoint_auth_method":"none","client_name":"` + name + `"}`
	resp, err := hc.Post(e.issuer+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
		Error    string `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("registration %s refused: %d %s", name, resp.StatusCode, reg.Error)
	}
	return reg.ClientID
}

func (e *env) clientExists(t *testing.T, id string) bool {
	t.Helper()
	var n int
	if err := e.st.DB().QueryRow(`SELECT count(*) FROM oauth_clients WHERE client_id = ?`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestRegistrationFloodDisplacesOnlyTheFlooder: one address registers floodSize clients (1,000
// without the race detector). On the old
// code the 1,001st registration — anyone's — got 503 for a day. Now the flood only displaces the
// flooder's own oldest unused registrations; a client from the same address that holds a grant
// stays, and a user elsewhere registers and signs in as usual.
func TestRegistrationFloodDisplacesOnlyTheFlooder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	attacker := &http.Client{Transport: transportFrom(t, attackerIP)}

	// A household behind the attacker's address had connected Claude before the flood.
	neighbour := e.clientFor(e.registerFrom(t, attacker, "Neighbour"), claudeCallback)
	neighbourTok := e.grant(neighbour)

	var ids []string
	for i := range floodSize {
		ids = append(ids, e.registerFrom(t, attacker, fmt.Sprint("flood-", i)))
	}
	for _, id := range ids[:len(ids)-maxUnusedClientsPerAddr] {
		if e.clientExists(t, id) {
			t.Fatalf("the flooder's early registration %s is still there", id)
		}
	}
	for _, id := range ids[len(ids)-maxUnusedClientsPerAddr:] {
		if !e.clientExists(t, id) {
			t.Fatalf("the flooder's %d most recent registrations should stay; %s is gone", maxUnusedClientsPerAddr, id)
		}
	}
	if _, err := e.refresh(neighbour, neighbourTok.RefreshToken); err != nil {
		t.Fatalf("a client with a grant was displaced by the flood: %v", err)
	}

	victim := e.clientFor(e.registerFrom(t, &http.Client{Transport: transportFrom(t, victimIP)}, "Claude"), claudeCallback)
	v := oauth2.GenerateVerifier()
	tok, err := e.exchange(victim, e.codeAs(newBrowserFrom(t, victimIP), "ada", "ada-pw", victim, v), v)
	if err != nil || e.mcpStatus(tok.AccessToken) != http.StatusOK {
		t.Fatalf("the victim cannot connect after the flood: %v", err)
	}
}

// TestRegistrationFloodFromManyAddresses: addresses that each stay within their quota together
// pass the global cap (lowered to 100 here to keep the test fast); the busiest give way first,
// never the user who registered once.
func TestRegistrationFloodFromManyAddresses(t *testing.T) {
	t.Parallel()
	const total = 100
	e := newEnv(t, func(o *Options) { o.limits.clients = total })
	victim := &http.Client{Transport: transportFrom(t, victimIP)}
	early := e.registerFrom(t, victim, "Claude")
	for a := range total/maxUnusedClientsPerAddr + 2 {
		hc := &http.Client{Transport: transportFrom(t, fmt.Sprintf("127.0.1.%d", a+1))}
		for i := range maxUnusedClientsPerAddr {
			e.registerFrom(t, hc, fmt.Sprint("flood-", a, "-", i))
		}
	}
	var unused int
	e.st.DB().QueryRow(`SELECT count(*) FROM oauth_clients WHERE last_used_at = 0`).Scan(&unused)
	if unused > total {
		t.Fatalf("%d unused registrations kept, cap %d", unused, total)
	}
	if !e.clientExists(t, early) {
		t.Fatal("the single registration of a quiet address was displaced before the flooders'")
	}
	tok := e.grant(e.clientFor(early, claudeCallback))
	if e.mcpStatus(tok.AccessToken) != http.StatusOK {
		t.Fatal("the victim's token is refused")
	}
}

// TestAuthorizeFloodDisplacesOnlyTheFlooder: starting a login needs no credential. On the old code
// 1,000 of them locked every user out for ten minutes. Now a flood from one address displaces its
// own oldest pending logins, and floods from many addresses the busiest addresses' logins; a user
// who started a login elsewhere, before or after, completes it.
func TestAuthorizeFloodDisplacesOnlyTheFlooder(t *testing.T) {
	t.Parallel()
	const total = 200 // the global cap, lowered from maxLogins to keep the many-address flood fast
	e := newEnv(t, func(o *Options) { o.limits.logins = total })
	c := e.register(claudeCallback, "Claude")

	// The victim is half-way: on Home Assistant's login page when the flood starts.
	victim := newBrowserFrom(t, victimIP)
	v := oauth2.GenerateVerifier()
	haPage := victim.get(c.authURL(v, "victim-state"), claudeCallback)
	if !strings.Contains(haPage.body, `name="password"`) {
		t.Fatalf("victim did not reach the HA login: %d", haPage.status)
	}

	start := func(b *browser) string {
		resp, err := b.c.Get(c.authURL(oauth2.GenerateVerifier(), "x"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		loc, err := resp.Location()
		if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), e.haURL) {
			t.Fatalf("flood login %d not started: %d %v", resp.StatusCode, resp.StatusCode, err)
		}
		return loc.Query().Get("state")
	}
	attacker := newBrowserFrom(t, attackerIP)
	var states []string
	for range floodSize {
		states = append(states, start(attacker))
	}
	for a := range total/maxLoginsPerAddr + 2 { // then many addresses, past the global cap
		b := newBrowserFrom(t, fmt.Sprintf("127.0.2.%d", a+1))
		for range maxLoginsPerAddr {
			start(b)
		}
	}
	now := e.clock.Now()
	for _, st := range states[:len(states)-maxLoginsPerAddr] {
		if _, _, ok := e.srv.logins.lookup(st, now); ok {
			t.Fatal("an early flood login is still held")
		}
	}
	e.srv.logins.mu.Lock()
	held := len(e.srv.logins.m)
	e.srv.logins.mu.Unlock()
	if held > total {
		t.Fatalf("%d logins held, cap %d", held, total)
	}

	// The victim finishes the login started before the flood, and another starts after it.
	action, f := formFields(haPage.body)
	f.Set("username", "ada")
	f.Set("password", "ada-pw")
	back := e.consent(victim, victim.postForm(e.haURL+action, f, claudeCallback), "allow", claudeCallback)
	if back.url == nil || back.url.Query().Get("code") == "" {
		t.Fatalf("the victim's login was displaced by the flood: %+v", back)
	}
	if _, err := e.exchange(c, back.url.Query().Get("code"), v); err != nil {
		t.Fatal(err)
	}
	v2 := oauth2.GenerateVerifier()
	if _, err := e.exchange(c, e.codeAs(newBrowserFrom(t, victimIP), "ada", "ada-pw", c, v2), v2); err != nil {
		t.Fatalf("a login started after the flood: %v", err)
	}
}

var cimdErrRe = regexp.MustCompile(`could not be used: ([^<]*)</p>`)

// TestCIMDNeverReachesPrivateAddresses: a client id URL is chosen by a stranger. On the old code
// https://127.0.0.1:PORT/... made hamcp connect to its own host and the error told closed ports
// (connection refused) from open ones (TLS or HTTP errors). Now no loopback, private, link-local
// or CGNAT address is ever connected to, whatever notation names it, and every failure reads the
// same.
func TestCIMDNeverReachesPrivateAddresses(t *testing.T) {
	t.Parallel()
	tlsDocs := httptestTLS(t) // an open port serving a valid document
	plain := httptestPlain(t) // an open port speaking plain HTTP
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	tlsPort := tlsDocs.Listener.Addr().(*net.TCPAddr).Port
	validID := fmt.Sprintf("https://127.0.0.1:%d/client.json", tlsPort)
	tlsDocs.set(200, `{"client_id":"`+validID+`","redirect_uris":["http://127.0.0.1:5/cb"]}`)

	hosts := append([]string{"10.0.0.1", "169.254.169.254", "100.64.0.1", "::ffff:127.0.0.1", "fd00::1", "0.0.0.0"}, defaultRedirectHosts...)
	e := newEnv(t, func(o *Options) { o.AllowedRedirectHosts = hosts; o.HTTPClient = tlsDocs.Client() })
	ids := []string{
		validID,
		fmt.Sprintf("https://localhost:%d/client.json", tlsPort),
		fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/client.json", tlsPort),
		"https://" + strings.TrimPrefix(plain.URL, "http://") + "/client.json",
		"https://" + closedAddr + "/client.json",
		"https://[::1]:1/client.json",
		"https://0.0.0.0:1/client.json",
		"https://10.0.0.1/client.json",
		"https://169.254.169.254/latest/meta-data.json",
		"https://100.64.0.1/client.json",
		"https://[fd00::1]/client.json",
	}
	want := ""
	for _, id := range ids {
		cl := e.clientFor(id, "http://127.0.0.1:5/cb")
		b := newBrowser(t)
		b.home = []string{e.issuer, e.haURL}
		page := b.get(cl.authURL(oauth2.GenerateVerifier(), "s"), outside)
		m := cimdErrRe.FindStringSubmatch(page.body)
		if page.status != http.StatusBadRequest || m == nil {
			t.Fatalf("%s: got %d %v, want the metadata error page", id, page.status, page.url)
		}
		if want == "" {
			want = m[1]
		}
		if m[1] != want || !strings.Contains(m[1], "could not be fetched") {
			t.Errorf("%s: error %q differs from %q: it tells addresses or ports apart", id, m[1], want)
		}
	}
	if n := tlsDocs.hits() + plain.hits(); n != 0 {
		t.Fatalf("hamcp connected to loopback %d times", n)
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr   string
		public bool
	}{
		{"1.1.1.1", true}, {"160.79.104.10", true}, {"2606:4700:4700::1111", true},
		{"127.0.0.1", false}, {"127.255.255.254", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false}, {"192.168.1.1", false}, {"::ffff:192.168.1.1", false},
		{"fc00::1", false}, {"fd12:3456::1", false}, {"169.254.169.254", false}, {"fe80::1", false}, {"fe80::1%eth0", false},
		{"0.0.0.0", false}, {"::", false}, {"0.1.2.3", false}, {"224.0.0.1", false}, {"ff02::1", false}, {"255.255.255.255", false},
		{"100.64.0.1", false}, {"100.127.255.255", false}, {"100.128.0.1", true}, {"::127.0.0.1", false},
		{"64:ff9b::7f00:1", false}, {"2002:7f00:1::", false}, {"2001::1", false}, {"192.0.0.8", false}, {"198.18.0.1", false},
		{"172.32.0.1", true}, {"11.0.0.1", true},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if got := publicAddr(a); got != tt.public {
			t.Errorf("publicAddr(%s) = %v, want %v", tt.addr, got, tt.public)
		}
		err := checkDialAddress("tcp", netip.AddrPortFrom(a, 443).String(), false)
		if (err == nil) != tt.public {
			t.Errorf("checkDialAddress(%s) = %v", tt.addr, err)
		}
	}
	if checkDialAddress("tcp", "127.0.0.1:80", true) != nil || checkDialAddress("tcp", "10.0.0.1:80", true) == nil {
		t.Error("the test-only loopback allowance must allow loopback and only loopback")
	}
	if checkDialAddress("udp", "1.1.1.1:53", false) == nil || checkDialAddress("tcp", "example.com:443", false) == nil {
		t.Error("only resolved TCP addresses may pass")
	}
}

// FuzzDialAddressCheck: whatever address string the dialer hands over, what passes is a public
// unicast address by the standard library's own predicates, in every notation.
func FuzzDialAddressCheck(f *testing.F) {
	for _, s := range []string{"1.1.1.1:443", "127.0.0.1:80", "[::ffff:127.0.0.1]:443", "[fe80::1%eth0]:443", "[::ffff:10.0.0.1]:1", "[64:ff9b::a00:1]:443", "0.0.0.0:0", "[::]:443", "100.64.1.1:443"} {
		f.Add(s)
	}
	cgnat := netip.MustParsePrefix("100.64.0.0/10")
	f.Fuzz(func(t *testing.T, address string) {
		if checkDialAddress("tcp", address, false) != nil {
			return
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			t.Fatalf("unparsable address %q passed", address)
		}
		a := ap.Addr().WithZone("").Unmap()
		ip := net.IP(a.AsSlice())
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsMulticast() ||
			ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() || !ip.IsGlobalUnicast() || cgnat.Contains(a) {
			t.Fatalf("non-public address %q (%s) passed", address, a)
		}
		if a.Is4() && checkDialAddress("tcp", netip.AddrPortFrom(netip.AddrFrom16(a.As16()), ap.Port()).String(), false) != nil {
			t.Fatalf("%s passes but its IPv4-mapped form does not", a)
		}
	})
}

// grantAs runs the whole login as user and returns the client's tokens.
func (e *env) grantAs(c oauthClient, user, pass string) *oauth2.Token {
	e.t.Helper()
	v := oauth2.GenerateVerifier()
	tok, err := e.exchange(c, e.codeAs(newBrowser(e.t), user, pass, c, v), v)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// TestRefreshRechecksHomeAssistant: on the old code a grant refreshed for 30-day windows forever,
// whatever became of the user in Home Assistant, and also while HA was down. Now every refresh
// asks HA (config/auth/list, with hamcp's own administrator access) and a grant has an absolute
// lifetime.
func TestRefreshRechecksHomeAssistant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(e *env)
		code   string // the refresh error; "" = refresh works
		alive  bool   // the grant's current access token still works afterwards
	}{
		{"user unchanged", func(e *env) {}, "", true},
		{"user no longer an administrator", func(e *env) { e.ha.SetAdmin("u-ops", false) }, "invalid_grant", false},
		{"user deleted", func(e *env) { e.ha.RemoveUser("u-ops") }, "invalid_grant", false},
		{"Home Assistant unreachable", func(e *env) { e.haDown.Store(true) }, "temporarily_unavailable", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			c := e.register(claudeCallback, "Claude")
			tok := e.grantAs(c, "olga", "olga-pw")
			tt.change(e)
			next, err := e.refresh(c, tok.RefreshToken)
			if got := oauthErrorCode(err); got != tt.code || (tt.code == "" && err != nil) {
				t.Fatalf("refresh: %v, want %q", err, tt.code)
			}
			if alive := e.mcpStatus(tok.AccessToken) == http.StatusOK; alive != tt.alive {
				t.Fatalf("access token alive = %v, want %v", alive, tt.alive)
			}
			if tt.code == "temporarily_unavailable" {
				// Nothing was spent: once HA is back the same refresh token works.
				e.haDown.Store(false)
				if next, err = e.refresh(c, tok.RefreshToken); err != nil {
					t.Fatalf("refresh after HA came back: %v", err)
				}
			}
			if next != nil && e.mcpStatus(next.AccessToken) != http.StatusOK {
				t.Fatal("refreshed access token refused")
			}
		})
	}
}

// TestGrantLifetime: refreshed faithfully every 25 days, a grant still ends 90 days after the
// sign-in (on the old code each refresh renewed it for another 30 days, forever).
func TestGrantLifetime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	tok := e.grant(c)
	for range 3 {
		e.clock.Advance(25 * 24 * time.Hour)
		next, err := e.refresh(c, tok.RefreshToken)
		if err != nil {
			t.Fatalf("refresh within the lifetime: %v", err)
		}
		tok = next
	}
	e.clock.Advance(15*24*time.Hour + time.Second)
	if st := e.mcpStatus(tok.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("access token past the grant's lifetime: %d", st)
	}
	_, err := e.refresh(c, tok.RefreshToken)
	if oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("refresh past the lifetime: %v", err)
	}
}

// TestAccessTokenEndsWithTheGrant: an access token never outlives its grant's lifetime, even if
// the lifetime option is shortened after it was issued.
func TestAccessTokenEndsWithTheGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.GrantLifetime = 30 * time.Minute })
	c := e.register(claudeCallback, "Claude")
	tok := e.grant(c)
	if left := time.Until(tok.Expiry); left > 31*time.Minute {
		t.Fatalf("access token lives %s past a 30-minute grant", left)
	}
	e.clock.Advance(30*time.Minute + time.Second)
	if st := e.mcpStatus(tok.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("access token past the grant's lifetime: %d", st)
	}
}

// rawRefresh posts a refresh with client_id and returns the status and JSON body.
func (e *env) rawRefresh(clientID, refreshToken string) (int, map[string]any) {
	e.t.Helper()
	resp, err := http.PostForm(e.issuer+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {clientID}})
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestRefreshGrace: on the old code two concurrent refreshes with the same token (Claude and
// mcp-remote do this) revoked the whole grant, the winner's new tokens included. Now the same
// client replaying within refreshGrace gets the same pair; any other replay still revokes.
func TestRefreshGrace(t *testing.T) {
	t.Parallel()
	t.Run("concurrent refreshes both succeed with the same pair", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		c := e.register(claudeCallback, "Claude")
		tok := e.grant(c)
		const n = 4
		var wg sync.WaitGroup
		statuses := make([]int, n)
		bodies := make([]map[string]any, n)
		for i := range n {
			wg.Go(func() { statuses[i], bodies[i] = e.rawRefresh(c.cfg.ClientID, tok.RefreshToken) })
		}
		wg.Wait()
		for i := range n {
			if statuses[i] != http.StatusOK || bodies[i]["refresh_token"] != bodies[0]["refresh_token"] || bodies[i]["access_token"] != bodies[0]["access_token"] {
				t.Fatalf("refresh %d: %d %v; want 200 and the same pair as the first", i, statuses[i], bodies[i]["error"])
			}
		}
		at, _ := bodies[0]["access_token"].(string)
		if e.mcpStatus(at) != http.StatusOK {
			t.Fatal("the new access token is refused")
		}
		if _, err := e.refresh(c, bodies[0]["refresh_token"].(string)); err != nil {
			t.Fatalf("the new refresh token: %v", err)
		}
	})
	tests := []struct {
		name    string
		replay  func(e *env, c oauthClient, old string) (int, map[string]any)
		same    bool // the replay gets the rotation's pair; otherwise the grant is revoked
		advance time.Duration
	}{
		{"same client within the grace", func(e *env, c oauthClient, old string) (int, map[string]any) {
			return e.rawRefresh(c.cfg.ClientID, old)
		}, true, refreshGrace - time.Second},
		{"same client after the grace", func(e *env, c oauthClient, old string) (int, map[string]any) {
			return e.rawRefresh(c.cfg.ClientID, old)
		}, false, refreshGrace + time.Second},
		{"another client within the grace", func(e *env, c oauthClient, old string) (int, map[string]any) {
			return e.rawRefresh(e.register(claudeCallback, "Thief").cfg.ClientID, old)
		}, false, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			c := e.register(claudeCallback, "Claude")
			tok := e.grant(c)
			st, first := e.rawRefresh(c.cfg.ClientID, tok.RefreshToken)
			if st != http.StatusOK {
				t.Fatalf("first refresh: %d %v", st, first)
			}
			e.clock.Advance(tt.advance)
			st, again := tt.replay(e, c, tok.RefreshToken)
			newAccess, _ := first["access_token"].(string)
			if tt.same {
				if st != http.StatusOK || again["refresh_token"] != first["refresh_token"] || again["access_token"] != first["access_token"] {
					t.Fatalf("replay: %d %v, want the same pair", st, again)
				}
				if e.mcpStatus(newAccess) != http.StatusOK {
					t.Fatal("the grant was hurt by a replay within the grace")
				}
				return
			}
			if st != http.StatusBadRequest || again["error"] != "invalid_grant" {
				t.Fatalf("replay: %d %v, want invalid_grant", st, again)
			}
			if e.mcpStatus(newAccess) != http.StatusUnauthorized {
				t.Fatal("the grant survived a replay outside the grace")
			}
		})
	}
	t.Run("replay after the successor was itself rotated", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		c := e.register(claudeCallback, "Claude")
		tok := e.grant(c)
		_, first := e.rawRefresh(c.cfg.ClientID, tok.RefreshToken)
		_, second := e.rawRefresh(c.cfg.ClientID, first["refresh_token"].(string))
		if st, m := e.rawRefresh(c.cfg.ClientID, tok.RefreshToken); st != http.StatusBadRequest || m["error"] != "invalid_grant" {
			t.Fatalf("replay of a token two rotations old: %d %v", st, m)
		}
		if e.mcpStatus(second["access_token"].(string)) != http.StatusUnauthorized {
			t.Fatal("the grant survived")
		}
	})
	t.Run("the store cannot give the pair away", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		c := e.register(claudeCallback, "Claude")
		tok := e.grant(c)
		_, first := e.rawRefresh(c.cfg.ClientID, tok.RefreshToken)
		var sealed string
		e.st.DB().QueryRow(`SELECT successor FROM oauth_refresh_tokens WHERE token_hash = ?`, hashSecret(tok.RefreshToken)).Scan(&sealed)
		if sealed == "" || strings.Contains(sealed, first["refresh_token"].(string)) {
			t.Fatalf("successor stored as %q", sealed)
		}
		if _, err := openSuccessor(hashSecret(tok.RefreshToken), sealed); err == nil {
			t.Fatal("the stored hash opens the sealed pair")
		}
	})
}

var continueRe = regexp.MustCompile(`<a id="continue" href="([^"]+)">`)

// continueURL is where a refusal page sends the browser back to the client.
func continueURL(t *testing.T, page landing) *url.URL {
	t.Helper()
	m := continueRe.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no way back to the client on the page (%d): %s", page.status, page.body)
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.body, `http-equiv="refresh"`) {
		t.Error("the refusal page does not return to the client on its own")
	}
	return u
}

// TestRefusedLoginsReturnToClient: on the old code a non-admin, or a user who came back after the
// login expired, saw an error page and the client was never told (Claude waited for its timeout).
// Now the page says why and returns to the client's redirect URI with access_denied, state and iss.
func TestRefusedLoginsReturnToClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.register(claudeCallback, "Claude")
	tests := []struct {
		name   string
		run    func(t *testing.T) landing
		status int
		says   string
	}{
		{"not an administrator", func(t *testing.T) landing {
			return e.loginAtHA(newBrowser(t), c.authURL(oauth2.GenerateVerifier(), "st-1"), "gus", "gus-pw", claudeCallback)
		}, http.StatusForbidden, "not an administrator"},
		{"expired before the Home Assistant login", func(t *testing.T) landing {
			b := newBrowser(t)
			haPage := b.get(c.authURL(oauth2.GenerateVerifier(), "st-1"), claudeCallback)
			e.clock.Advance(loginTTL + time.Second)
			action, f := formFields(haPage.body)
			f.Set("username", "ada")
			f.Set("password", "ada-pw")
			return b.postForm(e.haURL+action, f, claudeCallback)
		}, http.StatusBadRequest, "expired"},
		{"expired on the consent page", func(t *testing.T) landing {
			b := newBrowser(t)
			page := e.loginAtHA(b, c.authURL(oauth2.GenerateVerifier(), "st-1"), "ada", "ada-pw", claudeCallback)
			e.clock.Advance(loginTTL + time.Second)
			path, f := formFields(page.body)
			f.Set("action", "allow")
			return b.postForm(e.issuer+path, f, claudeCallback)
		}, http.StatusBadRequest, "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := tt.run(t)
			if page.url != nil || page.status != tt.status || !strings.Contains(page.body, tt.says) {
				t.Fatalf("got %d %v, want a %d page saying %q", page.status, page.url, tt.status, tt.says)
			}
			u := continueURL(t, page)
			q := u.Query()
			if !strings.HasPrefix(u.String(), claudeCallback+"?") || q.Get("error") != "access_denied" || q.Get("state") != "st-1" ||
				q.Get("iss") != e.issuer || q.Get("code") != "" || q.Get("error_description") == "" {
				t.Fatalf("continue link = %s", u)
			}
		})
	}
}

func TestAddressKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ ip, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:bbbb::2", "2001:db8:1:2::/64"}, // the same subscriber
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"not-an-ip", "not-an-ip"},
	}
	for _, tt := range tests {
		if got := addressKey(tt.ip); got != tt.want {
			t.Errorf("addressKey(%q) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}
